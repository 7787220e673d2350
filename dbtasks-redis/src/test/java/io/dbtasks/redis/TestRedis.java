package io.dbtasks.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;

/**
 * The Redis the tests use: {@code DBTASKS_TEST_REDIS_URL} if set (then required: a Redis that is
 * down fails the tests); else a {@code redis-server} of this JVM's own ({@link OwnRedisServer},
 * started once on a free port) if the machine has the binary; else the Redis tests are skipped with
 * the reason printed. {@code -Ddbtasks.test.redis=false} skips them always. Each test class writes
 * under a key prefix of its own, so nothing needs flushing.
 */
final class TestRedis {
    private static RedisClient client;
    private static StatefulRedisConnection<String, String> connection;

    private TestRedis() {}

    private static OwnRedisServer own;

    static synchronized String url() {
        String fromEnv = System.getenv("DBTASKS_TEST_REDIS_URL");
        if (fromEnv != null && !fromEnv.isBlank()) {
            return fromEnv;
        }
        if (own == null) {
            try {
                own = OwnRedisServer.start();
            } catch (Exception e) {
                throw new IllegalStateException(
                        "DBTASKS_TEST_REDIS_URL is not set and the tests' own redis-server" + " did not start: "
                                + e.getMessage(),
                        e);
            }
            OwnRedisServer started = own;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    started.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            System.out.println(
                    "dbtasks tests: DBTASKS_TEST_REDIS_URL is not set; started an own redis-server at " + own.url());
        }
        return own.url();
    }

    /**
     * Skips the calling test if Redis is not required ({@code -Ddbtasks.test.redis=false}), or if
     * no URL is given and the machine has no {@code redis-server} to start (printing why).
     */
    static void assumeRequired() {
        Assumptions.assumeTrue(
                Boolean.parseBoolean(System.getProperty("dbtasks.test.redis", "true")),
                "Redis is not required (-Ddbtasks.test.redis=false)");
        String fromEnv = System.getenv("DBTASKS_TEST_REDIS_URL");
        if ((fromEnv == null || fromEnv.isBlank()) && !java.nio.file.Files.isExecutable(OwnRedisServer.BINARY)) {
            String reason = "Redis tests skipped: DBTASKS_TEST_REDIS_URL is not set and there is no redis-server at "
                    + OwnRedisServer.BINARY + " to start (-Ddbtasks.test.redis-server=/path/to/redis-server)";
            System.out.println("dbtasks tests: " + reason);
            Assumptions.abort(reason);
        }
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
