package io.dbtasks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.once.RunOnceResult;
import io.dbtasks.once.RunOnceResult.Outcome;
import io.dbtasks.testing.TestDatabase;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The seed-000 "double insurance": a Redis lock as the filter, the H2 run-once row as the guarantee. */
class RedisFilteredRunOnceTest {
    private static final Duration LEASE = Duration.ofSeconds(30);

    private DbTasks tasks;
    private RedisLeaseLocks redisLocks;
    private RedisFilteredRunOnce once;

    @BeforeEach
    void setUp() {
        TestRedis.assumeRequired();
        tasks = DbTasks.builder(TestDatabase.H2.dataSource()).workers(false).build();
        TestDatabase.H2.clear();
        redisLocks = new RedisLeaseLocks(TestRedis.connection(), TestRedis.freshPrefix(), "A");
        once = new RedisFilteredRunOnce(redisLocks, tasks.guards());
    }

    @AfterEach
    void tearDown() {
        if (tasks != null) {
            redisLocks.close();
            tasks.close();
        }
    }

    @Test
    void firstCallRunsAndLaterCallsPassTheFilterAndAreSkippedByTheDatabase() {
        AtomicInteger runs = new AtomicInteger();
        assertThat(once.runOnce("report:2026-11-22", LEASE, l -> runs.incrementAndGet())
                        .outcome())
                .isEqualTo(Outcome.RAN);
        assertThat(once.runOnce("report:2026-11-22", LEASE, l -> runs.incrementAndGet())
                        .outcome())
                .isEqualTo(Outcome.SKIPPED_DONE);
        assertThat(runs).hasValue(1);
        assertThat(redisLocks.find(RedisFilteredRunOnce.LOCK_PREFIX + "report:2026-11-22"))
                .as("the filter lock is released")
                .isEmpty();
    }

    @Test
    void aCallerArrivingWhileTheWorkRunsIsTurnedAwayByRedis() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        CompletableFuture<RunOnceResult> first = CompletableFuture.supplyAsync(() -> once.runOnce("k", LEASE, l -> {
            started.countDown();
            finish.await(10, TimeUnit.SECONDS);
        }));
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        RunOnceResult second = once.runOnce("k", LEASE, l -> {
            throw new AssertionError("must not run");
        });
        finish.countDown();
        assertThat(second.outcome()).isEqualTo(Outcome.SKIPPED_FILTERED);
        assertThat(second.lease().name()).as("the Redis lock turned it away").isEqualTo("once:k");
        assertThat(second.holder()).hasValueSatisfying(h -> assertThat(h).startsWith("A/"));
        assertThat(first.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(Outcome.RAN);
    }

    @Test
    void whenTheRedisLockExpiresEarlyTheDatabaseRowStillDecides() throws Exception {
        Duration shortLease = Duration.ofMillis(500); // the database renews; Redis does not
        CompletableFuture<RunOnceResult> first =
                CompletableFuture.supplyAsync(() -> once.runOnce("k", shortLease, l -> Thread.sleep(1500)));
        Thread.sleep(1000);
        RunOnceResult second = once.runOnce("k", shortLease, l -> {
            throw new AssertionError("must not run");
        });
        assertThat(second.outcome()).isEqualTo(Outcome.SKIPPED_RUNNING);
        assertThat(second.lease().name()).as("the database row turned it away").isEqualTo("k");
        assertThat(first.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(Outcome.RAN);
    }

    @Test
    void withRedisDownTheDatabaseGuardWorksAlone() {
        RedisClient client = RedisClient.create(TestRedis.url());
        StatefulRedisConnection<String, String> closed = client.connect();
        closed.close();
        try (RedisLeaseLocks broken = new RedisLeaseLocks(closed, TestRedis.freshPrefix(), "A")) {
            RedisFilteredRunOnce degraded = new RedisFilteredRunOnce(broken, tasks.guards());
            AtomicInteger runs = new AtomicInteger();
            assertThat(degraded.runOnce("k", LEASE, l -> runs.incrementAndGet()).outcome())
                    .isEqualTo(Outcome.RAN);
            assertThat(degraded.runOnce("k", LEASE, l -> runs.incrementAndGet()).outcome())
                    .isEqualTo(Outcome.SKIPPED_DONE);
            assertThat(runs).hasValue(1);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void eightThreadsRacingOverFiftyKeysRunEachOnce() throws Exception {
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        Map<Outcome, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                futures.add(pool.submit(() -> {
                    for (int k = 0; k < 50; k++) {
                        RunOnceResult r = once.runOnce("race-" + k, LEASE, l -> {
                            runs.computeIfAbsent(l.name(), n -> new AtomicInteger())
                                    .incrementAndGet();
                            Thread.sleep(2);
                        });
                        outcomes.computeIfAbsent(r.outcome(), o -> new AtomicInteger())
                                .incrementAndGet();
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(runs).hasSize(50);
        assertThat(runs.values()).allSatisfy(n -> assertThat(n).hasValue(1));
        assertThat(outcomes.get(Outcome.RAN)).hasValue(50);
    }
}
