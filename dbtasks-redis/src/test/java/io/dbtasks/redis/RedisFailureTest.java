package io.dbtasks.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.dbtasks.DbTasks;
import io.dbtasks.lock.Lease;
import io.dbtasks.once.RunOnceResult;
import io.dbtasks.once.RunOnceResult.Outcome;
import io.dbtasks.testing.LogCapture;
import io.dbtasks.testing.TestDatabase;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Redis variant when Redis fails, against a Redis this test starts, freezes,
 * kills and restarts empty itself. The client is built as the README shows ({@code
 * RedisClient.create(url)}, Lettuce's defaults: 60 s timeout, commands buffered while reconnecting).
 */
class RedisFailureTest {
    private static final Duration LEASE = Duration.ofSeconds(30);

    private OwnRedisServer server;
    private RedisClient client;
    private StatefulRedisConnection<String, String> connection;
    private DbTasks tasks;

    @BeforeEach
    void setUp() throws Exception {
        server = OwnRedisServer.start();
        client = RedisClient.create(server.url());
        connection = client.connect();
        tasks = DbTasks.builder(TestDatabase.H2.dataSource()).workers(false).build();
        TestDatabase.H2.clear();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (tasks != null) {
            tasks.close();
        }
        if (client != null) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        if (server != null) {
            server.close();
        }
    }

    /** Waits until the connection works again after a restart. */
    private void awaitReconnected() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                connection.async().ping().get(1, TimeUnit.SECONDS);
                return;
            } catch (Exception notYet) {
                if (System.nanoTime() > deadline) {
                    throw notYet;
                }
            }
        }
    }

    private static long warnings(LogCapture log) {
        return log.messages().stream().filter(m -> m.contains("unavailable")).count();
    }

    @Test
    void redisDownFailsFastAndQuietly() throws Exception {
        try (RedisLeaseLocks locks = new RedisLeaseLocks(connection, "t:", "A");
                LogCapture log = LogCapture.of(RedisFilteredRunOnce.class)) {
            RedisFilteredRunOnce once = new RedisFilteredRunOnce(locks, tasks.guards());
            assertThat(once.runOnce("up", LEASE, l -> {}).outcome()).isEqualTo(Outcome.RAN);

            // Frozen: every call still finishes, through the database guard alone, far within 60 s.
            server.freeze(4);
            assertTimeoutPreemptively(Duration.ofSeconds(3), () -> {
                for (int i = 0; i < 3; i++) {
                    assertThat(once.runOnce("frozen-" + i, LEASE, l -> {}).outcome())
                            .isEqualTo(Outcome.RAN);
                }
            });

            // Down: the same, including the release after the work.
            server.kill();
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
                for (int i = 0; i < 10; i++) {
                    assertThat(once.runOnce("down-" + i, LEASE, l -> {}).outcome())
                            .isEqualTo(Outcome.RAN);
                }
            });
            assertThat(once.runOnce("down-0", LEASE, l -> {}).outcome()).isEqualTo(Outcome.SKIPPED_DONE);
            assertThat(warnings(log)).as("one warning per outage, not per call").isBetween(1L, 2L);
            assertThat(once.skippedFilterCalls()).isEqualTo(14);

            server.up();
            awaitReconnected();
            assertThat(once.runOnce("back", LEASE, l -> {}).outcome()).isEqualTo(Outcome.RAN);
            assertThat(log.contains("answers again")).as("recovery is logged").isTrue();
            assertThat(warnings(log)).isBetween(1L, 2L);
        }
    }

    @Test
    void tokensKeepIncreasingAcrossRedisRestart() throws Exception {
        try (RedisLeaseLocks locks = new RedisLeaseLocks(connection, "t:", "A")) {
            Lease before = locks.tryAcquire("n", LEASE).orElseThrow();
            server.kill();
            server.up(); // empty: the lock and its counter are gone
            awaitReconnected();
            Lease after = locks.tryAcquire("n", LEASE).orElseThrow();
            assertThat(after.token()).as("token after the restart").isGreaterThan(before.token());
            assertThat(locks.renew(before, LEASE))
                    .as("a grant from before the restart")
                    .isEmpty();
            assertThat(locks.release(before)).isFalse();
            // The same grant; its expiry is Redis's TIME plus the key's PTTL, which may differ by a
            // millisecond from the expiry the acquire computed (TIME after SET plus the lease).
            Lease found = locks.find("n").orElseThrow();
            assertThat(found.token()).isEqualTo(after.token());
            assertThat(found.owner()).isEqualTo(after.owner());
            assertThat(Duration.between(after.expiresAt(), found.expiresAt()).abs())
                    .isLessThanOrEqualTo(Duration.ofMillis(2));
        }
    }

    @Test
    void filterSkipIsNotReportedAsARunningHolder() throws Exception {
        try (RedisLeaseLocks locks = new RedisLeaseLocks(connection, "t:", "A")) {
            RedisFilteredRunOnce once = new RedisFilteredRunOnce(locks, tasks.guards());
            assertThat(once.runOnce("k", LEASE, l -> {}).outcome()).isEqualTo(Outcome.RAN);
            // Another caller holds the filter lock of a key that already SUCCEEDED.
            Lease other = locks.tryAcquire(RedisFilteredRunOnce.LOCK_PREFIX + "k", LEASE)
                    .orElseThrow();
            RunOnceResult r = once.runOnce("k", LEASE, l -> {
                throw new AssertionError("must not run");
            });
            assertThat(r.outcome())
                    .as("SKIPPED_RUNNING says another lease is running; only the filter lock was held")
                    .isEqualTo(Outcome.SKIPPED_FILTERED);
            assertThat(r.lease()).isEqualTo(other);
            assertThat(r.ran()).isFalse();
            assertThat(locks.release(other)).isTrue();
        }
    }
}
