package io.dbtasks.redis;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.cluster.LockCounter;
import io.dbtasks.testing.SecondProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.Map;

/**
 * The second process of {@link RedisLockCounterTest}: 8 threads count under the Redis lock.
 *
 * <p>Arguments: Redis URL, key prefix, JDBC URL of the counter, process name, seconds.
 */
public final class RedisCounterWorkerMain {
    private RedisCounterWorkerMain() {}

    public static void main(String[] args) throws Exception {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(args[2]);
        hc.setMaximumPoolSize(12);
        RedisClient client = RedisClient.create(args[0]);
        try (HikariDataSource ds = new HikariDataSource(hc);
                StatefulRedisConnection<String, String> connection = client.connect();
                RedisLeaseLocks locks = new RedisLeaseLocks(connection, args[1], args[3])) {
            SecondProcess.awaitGo();
            Map<String, Long> figures = LockCounter.run(
                    locks, ds, args[3], RedisLockCounterTest.THREADS, Duration.ofSeconds(Long.parseLong(args[4])));
            System.out.println("FIGURES " + SecondProcess.format(figures));
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        System.exit(0);
    }
}
