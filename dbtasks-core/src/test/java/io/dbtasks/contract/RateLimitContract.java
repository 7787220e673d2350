package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.limit.Limit;
import io.dbtasks.limit.Rate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Rate limits per key: in any window of the rate's period, at most its starts of a key, across
 * three engines, counted from the attempts' start times (the database clock); the rate is used with
 * a backlog; a changed rate holds within a second; a held-back task says why. Run once per database
 * by the subclasses.
 *
 * <p>{@code -Ddbtasks.test.rateSeconds=60} measures the backlog test over a minute (default {@value
 * #DEFAULT_SECONDS} s, after two seconds of warm-up); it prints each key's figures.
 */
public abstract class RateLimitContract extends EngineHarness {
    static final String KIND = "rate.work";
    static final String QUEUE = "rated";
    static final int DEFAULT_SECONDS = 8;
    static final Duration WARM_UP = Duration.ofSeconds(2);

    /**
     * Tasks are enqueued key by key, and every fifth fails its first attempt and is retried at once:
     * a claim without the rate would start a key's backlog at once, and a retry not counted would
     * add starts to a window. Tasks without a key, enqueued while every key waits for its window,
     * start at once.
     */
    @Test
    void noWindowOfThePeriodHasMoreStartsOfAKeyThanItsRateAndTheRateIsUsed() throws Exception {
        int seconds = Integer.getInteger("dbtasks.test.rateSeconds", DEFAULT_SECONDS);
        int keys = 3;
        int rate = 10;
        Duration period = Duration.ofSeconds(1);
        DbTasks producer = producer();
        producer.limits().set(Limit.rate(QUEUE, Limit.EVERY_KEY, new Rate(rate, period)));
        List<TaskRequest> requests = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            for (int i = 0; i < rate * (seconds + 4); i++) {
                requests.add(TaskRequest.builder(i % 5 == 0 ? "rate.flaky" : KIND)
                        .queue(QUEUE)
                        .concurrencyKey("key-" + k)
                        .priority(i % 5 == 0 ? 1 : 0) // claimed first, and so is their retry
                        .maxAttempts(2)
                        .retryPolicy(RetryPolicy.fixed(Duration.ZERO))
                        .build());
            }
        }
        AtomicInteger unkeyed = new AtomicInteger();
        for (int e = 0; e < 3; e++) {
            String worker = "rate-" + e;
            engine(b -> b.workerId(worker)
                            .queue(QUEUE, 16)
                            .claimBatch(16)
                            .handler(KIND, Void.class, (ctx, p) -> Thread.sleep(5))
                            .handler("rate.flaky", Void.class, (ctx, p) -> {
                                Thread.sleep(5);
                                if (ctx.attempt() == 1) {
                                    throw new IllegalStateException("first attempt fails");
                                }
                            })
                            .handler("rate.free", Void.class, (ctx, p) -> unkeyed.incrementAndGet()))
                    .start();
        }
        // Enqueued once the three engines run, so that the measure starts with all of them.
        producer.enqueueAll(requests);
        Thread.sleep(2_000);
        // Every key has used its window by now and waits for the next: tasks without a key still start.
        List<TaskRequest> free = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            free.add(TaskRequest.builder("rate.free").queue(QUEUE).build());
        }
        producer.enqueueAll(free);
        long enqueuedFree = System.nanoTime();
        long freeStarted = -1;
        while (System.nanoTime() - enqueuedFree < Duration.ofSeconds(5).toNanos()) {
            if (unkeyed.get() == free.size()) {
                freeStarted = System.nanoTime() - enqueuedFree;
                break;
            }
            Thread.sleep(20);
        }
        Thread.sleep(seconds * 1000L + 1000 - (System.nanoTime() - enqueuedFree) / 1_000_000);
        stopEngines();

        Map<String, List<Instant>> starts = new HashMap<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT t.concurrency_key, a.started_at AS s FROM"
                        + " dbtasks_attempt a JOIN dbtasks_task t ON t.id = a.task_id WHERE t.concurrency_key"
                        + " IS NOT NULL ORDER BY a.started_at");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                starts.computeIfAbsent(rs.getString(1), k -> new ArrayList<>())
                        .add(dialect().getInstant(rs, "s"));
            }
        }
        assertThat(starts).hasSize(keys);
        Duration span = Duration.ofSeconds(seconds);
        long allowed = rate * (span.toMillis() / period.toMillis());
        Map<String, Long> usedByKey = new HashMap<>();
        for (Map.Entry<String, List<Instant>> e : starts.entrySet()) {
            List<Instant> at = e.getValue();
            int most = mostInAnyWindow(at, period);
            // Measured from the key's third window on: the first two are the engines' warm-up (JIT, pools,
            // the tasks without a key), as in the other timed checks.
            Instant from = at.get(0).plus(WARM_UP);
            long used = at.stream()
                    .filter(t -> !t.isBefore(from) && t.isBefore(from.plus(span)))
                    .count();
            System.out.printf(
                    "rate test %s %s: %d starts, most in any %s window %d, %d of %d allowed in %d s after warm-up"
                            + " (%.1f %%)%n",
                    database(), e.getKey(), at.size(), period, most, used, allowed, seconds, 100.0 * used / allowed);
            assertThat(most)
                    .as("starts of " + e.getKey() + " in one window of " + period)
                    .isLessThanOrEqualTo(rate);
            usedByKey.put(e.getKey(), used);
        }
        // After every key's figures are printed.
        usedByKey.forEach((key, used) -> assertThat(used)
                .as("starts of " + key + " in " + seconds + " s after the warm-up")
                .isGreaterThanOrEqualTo((long) Math.ceil(0.9 * allowed)));
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE attempt = 2"))
                .as("retried tasks started again")
                .isPositive();
        // Asserted last, so that a failure here still shows the figures above.
        assertThat(freeStarted)
                .as("the tasks without a key all started within 5 s, beside the keys held back by their rate")
                .isNotNegative();
    }

    @Test
    void aRateChangedAtRunTimeHoldsOnEveryEngineWithinASecond() throws Exception {
        DbTasks producer = producer();
        producer.limits().set(Limit.rate(QUEUE, "hot", new Rate(20, Duration.ofSeconds(1))));
        List<TaskRequest> requests = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            requests.add(
                    TaskRequest.builder(KIND).queue(QUEUE).concurrencyKey("hot").build());
        }
        producer.enqueueAll(requests);
        for (int e = 0; e < 3; e++) {
            String worker = "change-" + e;
            engine(b -> b.workerId(worker).queue(QUEUE, 4).claimBatch(4).handler(KIND, Void.class, (ctx, p) -> {}))
                    .start();
        }
        eventually()
                .atMost(Duration.ofSeconds(30))
                .alias("the engines warmed up on the key")
                .until(() -> producer.stats().tasks().getOrDefault(TaskStatus.SUCCEEDED, 0L) >= 20);

        // Lowered: from a second after the change, no window of a second has more than 4 starts.
        producer.limits().set(Limit.rate(QUEUE, "hot", new Rate(4, Duration.ofSeconds(1))));
        Instant lowered = databaseNow();
        Thread.sleep(3_000);
        // Raised: from a second after the change, more than the old rate starts in a second.
        producer.limits().set(Limit.rate(QUEUE, "hot", new Rate(30, Duration.ofSeconds(1))));
        Instant raised = databaseNow();
        Thread.sleep(2_000);
        stopEngines();

        List<Instant> all = new ArrayList<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT started_at AS s FROM dbtasks_attempt ORDER BY 1");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                all.add(dialect().getInstant(rs, "s"));
            }
        }
        Instant lowHeld = lowered.plusSeconds(1);
        List<Instant> low = all.stream()
                .filter(t -> !t.isBefore(lowHeld) && t.isBefore(raised))
                .toList();
        assertThat(mostInAnyWindow(low, Duration.ofSeconds(1)))
                .as("starts in one second, from a second after the rate was lowered to 4")
                .isLessThanOrEqualTo(4);
        assertThat(low).as("the lowered rate is used").hasSizeGreaterThanOrEqualTo(4);
        Instant highFrom = raised.plusSeconds(1);
        long high = all.stream()
                .filter(t -> !t.isBefore(highFrom) && t.isBefore(highFrom.plusSeconds(1)))
                .count();
        assertThat(high)
                .as("starts in the second from a second after the rate was raised to 30")
                .isGreaterThan(4)
                .isLessThanOrEqualTo(30);
    }

    @Test
    void aTaskHeldBackByItsRateSaysWhyWhileOtherKeysRun() {
        DbTasks producer = producer();
        Limit both = Limit.maxRunning(QUEUE, "slow", 5).withRate(new Rate(2, Duration.ofHours(1)));
        producer.limits().set(both);
        assertThat(producer.limits().list()).containsExactly(both);
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ids.add(producer.enqueue(TaskRequest.builder(KIND)
                            .queue(QUEUE)
                            .concurrencyKey("slow")
                            .build())
                    .task()
                    .id());
        }
        DbTasks worker = engine(b -> b.queue(QUEUE, 4).handler(KIND, Void.class, (ctx, p) -> {}));
        worker.start();
        awaitStatus(producer, ids.get(0), TaskStatus.SUCCEEDED);
        awaitStatus(producer, ids.get(1), TaskStatus.SUCCEEDED);
        long other = producer.enqueue(TaskRequest.builder(KIND)
                        .queue(QUEUE)
                        .concurrencyKey("other")
                        .build())
                .task()
                .id();
        awaitStatus(producer, other, TaskStatus.SUCCEEDED);
        assertStaysIn(producer, ids.get(2), TaskStatus.PENDING, Duration.ofMillis(500));
        assertThat(producer.limits().waitReason(ids.get(2)))
                .hasValue("waiting for rate limit of key slow: 2 starts per 1h");
        // Lifted: the task starts at once.
        producer.limits().set(Limit.maxRunning(QUEUE, "slow", 5));
        awaitStatus(producer, ids.get(2), TaskStatus.SUCCEEDED);
    }

    /**
     * A queue-wide rate of 10 starts per second over 60 tasks with mixed keys and none, claimed by
     * three engines: no window of a second (sliding, over every start time by the database clock)
     * holds more than 10 starts of the queue, every task runs once, and the queue runs at about its
     * rate; a key's own limit holds beside it.
     */
    @Test
    void aQueueWideRateHoldsInEveryWindowAcrossEnginesForTasksWithAndWithoutKeys() throws Exception {
        int rate = 10;
        int tasks = 60;
        Duration period = Duration.ofSeconds(1);
        DbTasks producer = producer();
        producer.limits().setQueueRate(QUEUE, new Rate(rate, period));
        producer.limits().set(Limit.maxRunning(QUEUE, "key-0", 2));
        assertThat(producer.limits().queueRates()).containsExactly(Map.entry(QUEUE, new Rate(rate, period)));
        assertThat(producer.limits().queueRate(QUEUE)).hasValue(new Rate(rate, period));
        AtomicInteger running0 = new AtomicInteger();
        AtomicInteger most0 = new AtomicInteger();
        for (int e = 0; e < 3; e++) {
            String worker = "queue-rate-" + e;
            engine(b -> b.workerId(worker).queue(QUEUE, 8).claimBatch(8).handler(KIND, String.class, (ctx, key) -> {
                        boolean zero = "key-0".equals(key);
                        if (zero) {
                            most0.accumulateAndGet(running0.incrementAndGet(), Math::max);
                        }
                        Thread.sleep(zero ? 300 : 5);
                        if (zero) {
                            running0.decrementAndGet();
                        }
                    }))
                    .start();
        }
        List<TaskRequest> requests = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            String key = i % 3 == 0 ? null : "key-" + (i % 4);
            requests.add(TaskRequest.builder(KIND)
                    .payload(key == null ? "none" : key)
                    .queue(QUEUE)
                    .concurrencyKey(key)
                    .build());
        }
        producer.enqueueAll(requests);
        eventually()
                .atMost(Duration.ofSeconds(30))
                .alias("every task succeeded")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'SUCCEEDED'") == tasks);
        stopEngines();

        List<Instant> starts = attemptStarts();
        assertThat(starts).as("one start per task").hasSize(tasks);
        assertThat(count("SELECT COUNT(DISTINCT task_id) FROM dbtasks_attempt")).isEqualTo(tasks);
        assertThat(mostInAnyWindow(starts, period))
                .as("starts of the queue in one window of " + period)
                .isLessThanOrEqualTo(rate);
        // 60 starts at 10 per second: the sixth window's starts come 5 s after the first ones at the
        // earliest; a queue that used its rate starts its last task well within 8 s.
        Duration span = Duration.between(starts.get(0), starts.get(starts.size() - 1));
        System.out.printf("queue rate test %s: %d starts over %s%n", database(), starts.size(), span);
        assertThat(span).as("from the first start to the last").isLessThan(Duration.ofSeconds(8));
        assertThat(most0.get())
                .as("tasks of key-0 running at once, its limit 2")
                .isLessThanOrEqualTo(2);
    }

    @Test
    void removingAQueueWideRateLetsTheBacklogRunAtFullSpeed() {
        DbTasks producer = producer();
        producer.limits().setQueueRate(QUEUE, new Rate(5, Duration.ofHours(1)));
        List<TaskRequest> requests = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            requests.add(TaskRequest.builder(KIND)
                    .queue(QUEUE)
                    .concurrencyKey(i % 2 == 0 ? null : "k" + (i % 7))
                    .build());
        }
        List<Long> ids =
                producer.enqueueAll(requests).stream().map(r -> r.task().id()).toList();
        for (int e = 0; e < 2; e++) {
            engine(b -> b.queue(QUEUE, 16).claimBatch(16).handler(KIND, Void.class, (ctx, p) -> {}))
                    .start();
        }
        eventually()
                .atMost(PATIENCE)
                .alias("the window's 5 starts")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'SUCCEEDED'") == 5);
        long waiting = ids.stream()
                .filter(id -> producer.find(id).orElseThrow().status() == TaskStatus.PENDING)
                .findFirst()
                .orElseThrow();
        assertStaysIn(producer, waiting, TaskStatus.PENDING, Duration.ofMillis(700));
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status <> 'PENDING'"))
                .as("tasks started under a rate of 5 per hour")
                .isEqualTo(5);
        assertThat(producer.limits().waitReason(waiting))
                .hasValue("waiting for rate limit of queue " + QUEUE + ": 5 starts per 1h");

        long removed = System.nanoTime();
        assertThat(producer.limits().removeQueueRate(QUEUE)).isTrue();
        assertThat(producer.limits().queueRates()).isEmpty();
        eventually()
                .atMost(PATIENCE)
                .alias("the whole backlog succeeded")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'SUCCEEDED'") == 200);
        assertThat(Duration.ofNanos(System.nanoTime() - removed))
                .as("195 tasks after the rate was removed")
                .isLessThan(Duration.ofSeconds(5));
        assertThat(producer.limits().removeQueueRate(QUEUE)).isFalse();
    }

    // --- helpers ---

    private List<Instant> attemptStarts() throws SQLException {
        List<Instant> all = new ArrayList<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT started_at AS s FROM dbtasks_attempt ORDER BY 1");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                all.add(dialect().getInstant(rs, "s"));
            }
        }
        return all;
    }

    /** The most of {@code starts} (sorted) in any window [t, t + period). */
    static int mostInAnyWindow(List<Instant> starts, Duration period) {
        int most = 0;
        int from = 0;
        for (int to = 0; to < starts.size(); to++) {
            while (!starts.get(from).plus(period).isAfter(starts.get(to))) {
                from++;
            }
            most = Math.max(most, to - from + 1);
        }
        return most;
    }

    private Instant databaseNow() throws SQLException {
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT " + dialect().now() + " AS at");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return dialect().getInstant(rs, "at");
        }
    }
}
