package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.limit.Limit;
import io.dbtasks.testing.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Fair claims across concurrency keys: a queue set fair, without a limit and with one that never
 * binds, starts every task of 99 small keys within about ten rounds of the keys (within 2 s) while
 * one key's backlog, enqueued first, keeps the workers busy. Run once per database by the subclasses.
 *
 * <p>The big key has {@value #BIG_DEFAULT} tasks at build size; {@code
 * -Ddbtasks.test.fairness.bigKey=100000} runs the full size. The order of starts is asserted; the
 * 2 s bound only with {@code -Ddbtasks.test.fairness.timed=true}, on a machine not shared.
 */
public abstract class FairnessContract extends EngineHarness {
    static final String BIG = "fair.big";
    static final String SMALL = "fair.small";
    static final String QUEUE = "fair";
    static final int BIG_DEFAULT = 3_000;
    static final int SMALL_KEYS = 99;
    static final int PER_SMALL_KEY = 10;
    /** Workers across the three engines: far fewer than the keys, so the order of claims matters. */
    static final int WORKERS_PER_ENGINE = 4;

    @Test
    void fairnessIsAStoredSettingPerQueue() {
        DbTasks tasks = producer();
        assertThat(tasks.limits().fairQueues()).isEmpty();
        tasks.limits().setFair(QUEUE, true);
        tasks.limits().setFair(QUEUE, true); // idempotent
        tasks.limits().setFair("other", true);
        assertThat(tasks.limits().fairQueues()).containsExactly(QUEUE, "other");
        tasks.limits().setFair("other", false);
        tasks.limits().setFair("never-set", false);
        assertThat(tasks.limits().fairQueues()).containsExactly(QUEUE);
        assertThatThrownBy(() -> tasks.limits().setFair(" ", true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("queue must be 1 to");
    }

    @Test
    void smallKeysStartWithinTwoSecondsBehindABigBacklogInAFairQueue() throws Exception {
        DbTasks producer = producer();
        producer.limits().setFair(QUEUE, true);
        smallKeysStartWithinTwoSeconds(producer);
    }

    /**
     * A fair queue with a limit that never binds: round robin over keys, and the key locks. On H2 at
     * build size; everywhere at full size.
     */
    @Test
    void smallKeysStartWithinTwoSecondsBehindABigBacklogInAFairQueueWithALimitThatNeverBinds() throws Exception {
        Assumptions.assumeTrue(
                database() == TestDatabase.H2 || System.getProperty("dbtasks.test.fairness.bigKey") != null,
                "run at full size only");
        DbTasks producer = producer();
        producer.limits().setFair(QUEUE, true);
        producer.limits().set(Limit.maxRunning(QUEUE, Limit.EVERY_KEY, 1_000));
        smallKeysStartWithinTwoSeconds(producer);
    }

    private final AtomicLong firstStart = new AtomicLong(Long.MAX_VALUE);
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger busiest = new AtomicInteger();
    private final Map<Long, Boolean> seen = new ConcurrentHashMap<>();

    /** @return now, in {@link System#nanoTime()} */
    private long started(long taskId) {
        long now = System.nanoTime();
        firstStart.accumulateAndGet(now, Math::min);
        seen.put(taskId, Boolean.TRUE);
        busiest.accumulateAndGet(running.incrementAndGet(), Math::max);
        return now;
    }

    private void work() throws InterruptedException {
        try {
            Thread.sleep(2);
        } finally {
            running.decrementAndGet();
        }
    }

    private void smallKeysStartWithinTwoSeconds(DbTasks producer) throws Exception {
        int big = Integer.getInteger("dbtasks.test.fairness.bigKey", BIG_DEFAULT);
        List<TaskRequest> requests = new ArrayList<>(5_000);
        for (int i = 0; i < big; i++) {
            requests.add(
                    TaskRequest.builder(BIG).queue(QUEUE).concurrencyKey("big").build());
            if (requests.size() == 5_000) {
                producer.enqueueAll(requests);
                requests.clear();
            }
        }
        for (int i = 0; i < PER_SMALL_KEY; i++) {
            for (int k = 0; k < SMALL_KEYS; k++) {
                requests.add(TaskRequest.builder(SMALL)
                        .queue(QUEUE)
                        .concurrencyKey(String.format("small-%02d", k))
                        .build());
            }
        }
        producer.enqueueAll(requests);

        AtomicLong lastSmallStart = new AtomicLong();
        AtomicInteger smallStarted = new AtomicInteger();
        AtomicInteger bigStarted = new AtomicInteger();
        AtomicInteger bigWhileSmall = new AtomicInteger();
        for (int e = 0; e < 3; e++) {
            String worker = "fair-" + e;
            engine(b -> b.workerId(worker)
                            .queue(QUEUE, WORKERS_PER_ENGINE)
                            .claimBatch(WORKERS_PER_ENGINE)
                            .handler(BIG, Void.class, (ctx, p) -> {
                                started(ctx.taskId());
                                bigStarted.incrementAndGet();
                                if (smallStarted.get() < SMALL_KEYS * PER_SMALL_KEY) {
                                    bigWhileSmall.incrementAndGet();
                                }
                                work();
                            })
                            .handler(SMALL, Void.class, (ctx, p) -> {
                                lastSmallStart.accumulateAndGet(started(ctx.taskId()), Math::max);
                                smallStarted.incrementAndGet();
                                work();
                            }))
                    .start();
        }
        eventually()
                .atMost(Duration.ofSeconds(60))
                .alias("every task of the small keys started")
                .until(() -> smallStarted.get() == SMALL_KEYS * PER_SMALL_KEY);
        int bigAtEnd = bigStarted.get();
        // Work-conserving: with the small keys done, the big key takes every worker.
        eventually()
                .atMost(Duration.ofSeconds(30))
                .alias("the big key runs on after the small keys")
                .until(() -> bigStarted.get() >= bigAtEnd + 6 * WORKERS_PER_ENGINE);
        // Round robin: the big key had a turn in about every round of the keys (each engine rotates on
        // its own), and no more; without fairness every start would have been the big key's until its
        // backlog was done. Counted, not timed, so that a loaded machine cannot fail it.
        assertThat(bigWhileSmall.get())
                .as("tasks of the big key started while the small keys' %d started", SMALL_KEYS * PER_SMALL_KEY)
                .isBetween(PER_SMALL_KEY - 1, 10 * PER_SMALL_KEY);
        Duration took = Duration.ofNanos(lastSmallStart.get() - firstStart.get());
        System.out.printf(
                "%s: the small keys' tasks all started %d ms after the first start, %d of the big key's"
                        + " meanwhile, with %d of the big key's tasks waiting%n",
                database(), took.toMillis(), bigWhileSmall.get(), big);
        if (Boolean.getBoolean("dbtasks.test.fairness.timed")) {
            assertThat(took)
                    .as("from the first start to the last start of a small key's task")
                    .isLessThan(Duration.ofSeconds(2));
        }
        assertThat(busiest.get()).as("workers busy at once").isGreaterThan(WORKERS_PER_ENGINE);
        assertThat(seen).hasSizeGreaterThanOrEqualTo(SMALL_KEYS * PER_SMALL_KEY + bigAtEnd);
    }
}
