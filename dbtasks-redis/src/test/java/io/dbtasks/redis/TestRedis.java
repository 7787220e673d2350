package io.dbtasks.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;

/**
 * The Redis the tests use: {@code DBTASKS_TEST_REDIS_URL}, default {@code redis://127.0.0.1:6379}.
 * Required (a Redis that is down fails the tests) unless {@code -Ddbtasks.test.redis=false}. Each
 * test class writes under a key prefix of its own, so nothing needs flushing.
 */
final class TestRedis {
    private static RedisClient client;
    private static StatefulRedisConnection<String, String> connection;

    private TestRedis() {}

    static String url() {
        String fromEnv = System.getenv("DBTASKS_TEST_REDIS_URL");
        return fromEnv != null && !fromEnv.isBlank() ? fromEnv : "redis://127.0.0.1:6379";
    }

    /** Skips the calling test if Redis is not required. */
    static void assumeRequired() {
        Assumptions.assumeTrue(
                Boolean.parseBoolean(System.getProperty("dbtasks.test.redis", "true")),
                "Redis is not required (-Ddbtasks.test.redis=false)");
    }

    /** @return a connection shared by the tests of this JVM */
    static synchronized StatefulRedisConnection<String, String> connection() {
        if (connection == null) {
            client = RedisClient.create(url());
            connection = client.connect();
        }
        return connection;
    }

    /** @return a key prefix no other test run uses */
    static String freshPrefix() {
        return "dbtasks-test:" + UUID.randomUUID() + ":";
    }
}
