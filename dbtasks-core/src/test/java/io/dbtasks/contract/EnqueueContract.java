package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.InvalidPayloadException;
import io.dbtasks.Task;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Enqueue: idempotency keys (sequential and racing), and enqueue inside the caller's own
 * transaction. Run once per database by the subclasses.
 */
public abstract class EnqueueContract extends EngineHarness {
    static final String KIND = "report.build";

    record Report(String day, int version) {}

    /**
     * Lone enqueues from many threads at once are stored together, several per statement: each
     * caller must still get back its own task, committed, and no task may be stored twice or lost.
     */
    @Test
    void concurrentLoneEnqueuesEachGetTheirOwnTask() throws Exception {
        DbTasks tasks = producer();
        int threads = 16;
        int each = 100;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<List<Task>>> futures = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    List<Task> mine = new ArrayList<>();
                    for (int i = 0; i < each; i++) {
                        String name = "t" + thread + "-" + i;
                        EnqueueResult r = tasks.enqueue(TaskRequest.builder(KIND)
                                .name(name)
                                .payload(new Report(name, i))
                                .build());
                        assertThat(r.duplicate()).isFalse();
                        assertThat(r.task().name()).isEqualTo(name);
                        assertThat(r.task().payload()).contains("\"day\":\"" + name + "\"");
                        mine.add(r.task());
                    }
                    return mine;
                }));
            }
            java.util.Set<Long> ids = new java.util.HashSet<>();
            for (Future<List<Task>> f : futures) {
                for (Task task : f.get(60, TimeUnit.SECONDS)) {
                    assertThat(ids.add(task.id()))
                            .as("task %d returned twice", task.id())
                            .isTrue();
                    // what the caller got back is what was committed under that id
                    assertThat(count(
                                    "SELECT COUNT(*) FROM dbtasks_task WHERE id = ? AND name = ?",
                                    task.id(),
                                    task.name()))
                            .isEqualTo(1);
                }
            }
            assertThat(ids).hasSize(threads * each);
            assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(threads * each);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void duplicateIdempotencyKeyReturnsTheExistingTaskAndStoresOneRow() {
        DbTasks tasks = producer();
        String key = "daily-report:2026-11-22";

        EnqueueResult first = tasks.enqueue(TaskRequest.builder(KIND)
                .payload(new Report("2026-11-22", 1))
                .idempotencyKey(key)
                .build());
        EnqueueResult second = tasks.enqueue(TaskRequest.builder(KIND)
                .payload(new Report("2026-11-22", 2))
                .idempotencyKey(key)
                .build());

        assertThat(first.duplicate()).isFalse();
        assertThat(second.duplicate()).isTrue();
        assertThat(second.task().id()).isEqualTo(first.task().id());
        assertThat(second.task()).isEqualTo(first.task()); // the stored task, untouched by the second request
        assertThat(second.task().payload()).contains("\"version\":1");
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE idempotency_key = ?", key))
                .isEqualTo(1);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(1);
    }

    @Test
    void idempotencyKeysAreComparedExactlyNotByCaseAccentOrTrailingSpace() {
        DbTasks tasks = producer();
        List<String> keys =
                List.of("Invoice-A", "invoice-a", "INVOICE-A", "Invoice-A ", "Invoice-\u00c4", "aGVsbG8=", "AGVSBG8=");
        List<Long> ids = new ArrayList<>();
        for (String key : keys) {
            EnqueueResult r =
                    tasks.enqueue(TaskRequest.builder(KIND).idempotencyKey(key).build());
            assertThat(r.duplicate()).as("first enqueue of key '%s'", key).isFalse();
            assertThat(r.task().idempotencyKey()).isEqualTo(key);
            ids.add(r.task().id());
        }
        assertThat(ids).doesNotHaveDuplicates();
        for (int i = 0; i < keys.size(); i++) {
            assertThat(tasks.findByKey(keys.get(i))).map(Task::id).contains(ids.get(i));
            EnqueueResult again = tasks.enqueue(
                    TaskRequest.builder(KIND).idempotencyKey(keys.get(i)).build());
            assertThat(again.duplicate()).isTrue();
            assertThat(again.task().id()).isEqualTo(ids.get(i));
        }
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(keys.size());
    }

    @Test
    void duplicateKeyOfAFinishedTaskStillReturnsItWithoutRunningAgain() {
        AtomicInteger runs = new AtomicInteger();
        DbTasks tasks = engine(b -> b.handler(KIND, Report.class, (ctx, r) -> runs.incrementAndGet()));
        TaskRequest request = TaskRequest.builder(KIND)
                .payload(new Report("2026-11-23", 1))
                .idempotencyKey("daily-report:2026-11-23")
                .build();
        long id = tasks.enqueue(request).task().id();
        tasks.start();
        awaitStatus(tasks, id, TaskStatus.SUCCEEDED);

        EnqueueResult again = tasks.enqueue(request);

        assertThat(again.duplicate()).isTrue();
        assertThat(again.task().id()).isEqualTo(id);
        assertThat(again.task().status()).isEqualTo(TaskStatus.SUCCEEDED);
        assertStaysIn(tasks, id, TaskStatus.SUCCEEDED, Duration.ofMillis(300));
        assertThat(runs).hasValue(1);
    }

    @Test
    void concurrentEnqueuesOfOneKeyCreateExactlyOneTask() throws Exception {
        DbTasks tasks = producer();
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 5; round++) {
                String key = "race:" + round;
                CyclicBarrier start = new CyclicBarrier(threads);
                List<Future<EnqueueResult>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return tasks.enqueue(
                                TaskRequest.builder(KIND).idempotencyKey(key).build());
                    }));
                }
                List<EnqueueResult> done = new ArrayList<>();
                for (Future<EnqueueResult> f : results) {
                    done.add(f.get(30, TimeUnit.SECONDS));
                }
                assertThat(done)
                        .filteredOn(r -> !r.duplicate())
                        .as("round %d", round)
                        .hasSize(1);
                assertThat(done)
                        .extracting(r -> r.task().id())
                        .containsOnly(done.get(0).task().id());
                assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE idempotency_key = ?", key))
                        .isEqualTo(1);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(5);
    }

    @Test
    void enqueueOnTheCallersConnectionRollsBackWithItsTransaction() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        DbTasks tasks = engine(b -> b.handler(KIND, Report.class, (ctx, r) -> runs.incrementAndGet()));
        tasks.start();
        long id;
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            EnqueueResult r = tasks.enqueue(
                    c,
                    TaskRequest.builder(KIND)
                            .payload(new Report("2026-11-24", 1))
                            .idempotencyKey("rolled-back")
                            .build());
            id = r.task().id();
            assertThat(r.duplicate()).isFalse();
            c.rollback();
            c.setAutoCommit(true);
        }

        assertThat(tasks.find(id)).isEmpty();
        assertThat(tasks.findByKey("rolled-back")).isEmpty();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isZero();
        assertThat(runs).hasValue(0);
        // The key is free again.
        assertThat(tasks.enqueue(TaskRequest.builder(KIND)
                                .idempotencyKey("rolled-back")
                                .build())
                        .duplicate())
                .isFalse();
    }

    @Test
    void enqueueOnTheCallersConnectionIsInvisibleUntilCommitThenRuns() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        DbTasks tasks = engine(b -> b.handler(KIND, Report.class, (ctx, r) -> runs.incrementAndGet()));
        tasks.start();
        long id;
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            id = tasks.enqueue(c, TaskRequest.of(KIND, new Report("2026-11-25", 1)))
                    .task()
                    .id();
            assertThat(tasks.find(id))
                    .as("uncommitted, seen from another connection")
                    .isEmpty();
            assertThat(c.getAutoCommit()).isFalse(); // the engine left the caller's transaction alone
            c.commit();
            c.setAutoCommit(true);
        }

        awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
        assertThat(runs).hasValue(1);
    }

    @Test
    void duplicateKeyInsideTheCallersTransactionLeavesTheTransactionUsable() throws Exception {
        DbTasks tasks = producer();
        long existing = tasks.enqueue(
                        TaskRequest.builder(KIND).idempotencyKey("taken").build())
                .task()
                .id();
        long added;
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            EnqueueResult dup = tasks.enqueue(
                    c, TaskRequest.builder(KIND).idempotencyKey("taken").build());
            assertThat(dup.duplicate()).isTrue();
            assertThat(dup.task().id()).isEqualTo(existing);
            // A unique violation that aborted the transaction (PostgreSQL) would make this fail.
            added = tasks.enqueue(
                            c, TaskRequest.builder(KIND).idempotencyKey("fresh").build())
                    .task()
                    .id();
            c.commit();
            c.setAutoCommit(true);
        }
        assertThat(tasks.find(added)).isPresent();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(2);
    }

    @Test
    void enqueueAllStoresEveryTaskOrNone() {
        DbTasks tasks = producer();
        List<EnqueueResult> results = tasks.enqueueAll(List.of(
                TaskRequest.builder(KIND).idempotencyKey("batch-1").build(),
                TaskRequest.builder(KIND).idempotencyKey("batch-2").build(),
                TaskRequest.builder(KIND).idempotencyKey("batch-1").build()));
        assertThat(results).extracting(EnqueueResult::duplicate).containsExactly(false, false, true);
        assertThat(results.get(2).task().id()).isEqualTo(results.get(0).task().id());

        Object unwritable = new Object() {
            @SuppressWarnings("unused")
            public Object getSelf() {
                return this;
            }
        };
        assertThatThrownBy(() -> tasks.enqueueAll(List.of(
                        TaskRequest.builder(KIND).idempotencyKey("batch-3").build(), TaskRequest.of(KIND, unwritable))))
                .isInstanceOf(InvalidPayloadException.class);
        assertThat(tasks.findByKey("batch-3")).isEmpty();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(2);
    }

    /**
     * The task an enqueue returns is built from what the database filled in (id, due time, created
     * and updated) and what the request bound: it must equal the stored row in every field, for a
     * single enqueue, a keyed one and a multi-row one with a different due time per row.
     */
    @Test
    void enqueuedTaskIsTheStoredRowInEveryField() {
        DbTasks tasks = producer();
        Instant at = Instant.parse("2031-05-06T07:08:09.123456Z");
        TaskRequest full = TaskRequest.builder(KIND)
                .queue("reports")
                .name("full")
                .reference("ref-1")
                .priority(5)
                .maxAttempts(7)
                .timeout(Duration.ofSeconds(42))
                .traceParent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
                .payload(new Report("2026-11-24", 3))
                .runAt(at)
                .build();
        List<Task> returned = new ArrayList<>();
        returned.add(tasks.enqueue(full).task());
        returned.add(tasks.enqueue(TaskRequest.builder(KIND)
                        .idempotencyKey("stored-row")
                        .runAfter(Duration.ofMinutes(3))
                        .build())
                .task());
        List<TaskRequest> many = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            many.add(TaskRequest.builder(KIND)
                    .name("many-" + i)
                    .priority(i)
                    .runAt(at.plusSeconds(i))
                    .build());
        }
        tasks.enqueueAll(many).forEach(r -> returned.add(r.task()));

        for (Task t : returned) {
            assertThat(t).isEqualTo(tasks.find(t.id()).orElseThrow());
        }
        assertThat(returned.get(0).runAt()).isEqualTo(at);
        assertThat(returned.get(0).queue()).isEqualTo("reports");
        for (int i = 0; i < 5; i++) {
            assertThat(returned.get(2 + i).name()).isEqualTo("many-" + i);
            assertThat(returned.get(2 + i).runAt()).isEqualTo(at.plusSeconds(i));
        }
    }

    /**
     * A multi-row enqueue (one statement: a multi-row VALUES, or on PostgreSQL one INSERT over
     * arrays) stores each row's own value of every field, text that an array or SQL literal would
     * have to escape included, and returns each row as stored.
     */
    @Test
    void enqueueAllStoresEachRowsOwnFieldsAndTextAsGiven() {
        DbTasks tasks = producer();
        Instant at = Instant.parse("2031-05-06T07:08:09.123456Z");
        String[] awkward = {
            "NULL", "quote \" backslash \\ comma , braces {} parens ()", "ünïcødé ✓ 中文", " spaced ", "'single' ;--"
        };
        List<TaskRequest> requests = new ArrayList<>();
        for (int i = 0; i < awkward.length; i++) {
            TaskRequest.Builder b = TaskRequest.builder(KIND)
                    .queue(i % 2 == 0 ? "even" : "odd")
                    .name(awkward[i])
                    .reference(i == 4 ? null : awkward[(i + 1) % awkward.length])
                    .payload(i == 2 ? null : new Report(awkward[i], i))
                    .priority(-i)
                    .maxAttempts(i + 1)
                    .retryPolicy(
                            i % 2 == 0
                                    ? io.dbtasks.RetryPolicy.fixed(Duration.ofMillis(250 + i))
                                    : io.dbtasks.RetryPolicy.exponential(
                                            Duration.ofSeconds(i), 1.5 + i, Duration.ofMinutes(i), 0.1 * i))
                    .timeout(i % 2 == 0 ? null : Duration.ofSeconds(i))
                    .traceParent(i == 3 ? "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" : null);
            if (i % 2 == 0) {
                b.runAt(at.plusSeconds(i));
            } else {
                b.runAfter(Duration.ofMinutes(i));
            }
            requests.add(b.build());
        }
        List<EnqueueResult> results = tasks.enqueueAll(requests);

        assertThat(results).hasSize(awkward.length);
        for (int i = 0; i < awkward.length; i++) {
            Task t = results.get(i).task();
            assertThat(t)
                    .as("row %d as returned and as stored", i)
                    .isEqualTo(tasks.find(t.id()).orElseThrow());
            assertThat(t.name()).isEqualTo(awkward[i]);
            assertThat(t.reference()).isEqualTo(i == 4 ? null : awkward[(i + 1) % awkward.length]);
            assertThat(t.queue()).isEqualTo(i % 2 == 0 ? "even" : "odd");
            assertThat(t.priority()).isEqualTo(-i);
            assertThat(t.maxAttempts()).isEqualTo(i + 1);
            assertThat(t.traceParent())
                    .isEqualTo(i == 3 ? "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" : null);
            if (i == 2) {
                assertThat(t.payload()).isIn(null, "null");
            } else {
                assertThat(t.payload()).contains(String.valueOf(i)).contains("\"day\"");
            }
            if (i % 2 == 0) {
                assertThat(t.runAt()).isEqualTo(at.plusSeconds(i));
            } else {
                assertThat(Duration.between(t.createdAt(), t.runAt()))
                        .isCloseTo(Duration.ofMinutes(i), Duration.ofSeconds(1));
            }
            io.dbtasks.RetryPolicy policy = requests.get(i).retryPolicy();
            String row = " WHERE id = " + t.id();
            assertThat(count("SELECT COUNT(*) FROM dbtasks_task" + row + " AND status = 'PENDING' AND attempt = 0"
                            + " AND kind = '" + KIND + "' AND backoff = '"
                            + policy.backoff().name() + "'"
                            + " AND backoff_initial_ms = " + policy.initial().toMillis()
                            + " AND backoff_max_ms = " + policy.max().toMillis()
                            + " AND backoff_multiplier = " + policy.multiplier()
                            + " AND backoff_jitter = " + policy.jitter()
                            + (i % 2 == 0 ? " AND timeout_ms IS NULL" : " AND timeout_ms = " + (1000 * i))))
                    .as("row %d's retry policy %s and timeout", i, policy)
                    .isEqualTo(1);
            assertThat(tasks.find(t.id()).orElseThrow().payload()).isEqualTo(t.payload());
        }
        Report back = tools.jackson.databind.json.JsonMapper.builder()
                .build()
                .readValue(tasks.find(results.get(1).task().id()).orElseThrow().payload(), Report.class);
        assertThat(back).isEqualTo(new Report(awkward[1], 1));
        assertThat(results.stream().map(r -> r.task().id()).toList()).isSorted();
    }

    @Test
    void enqueueAllOfManyKeylessTasksReturnsThemInRequestOrderAmongKeyedOnes() {
        DbTasks tasks = producer();
        List<TaskRequest> requests = new java.util.ArrayList<>();
        for (int i = 0; i < 1_203; i++) {
            TaskRequest.Builder b =
                    TaskRequest.builder(KIND).reference("r-" + i).priority(i % 7);
            if (i % 400 == 17) {
                b.idempotencyKey("keyed-" + i);
            }
            requests.add(b.build());
        }
        requests.add(TaskRequest.builder(KIND)
                .idempotencyKey("keyed-17")
                .reference("again")
                .build());
        List<EnqueueResult> results = tasks.enqueueAll(requests);
        assertThat(results).hasSize(requests.size());
        for (int i = 0; i < 1_203; i++) {
            assertThat(results.get(i).task().reference()).isEqualTo("r-" + i);
            assertThat(results.get(i).task().priority()).isEqualTo(i % 7);
            assertThat(results.get(i).duplicate()).isFalse();
        }
        assertThat(results.get(1_203).duplicate()).isTrue();
        assertThat(results.get(1_203).task().reference()).isEqualTo("r-17");
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(1_203);
        assertThat(results.stream().map(r -> r.task().id()).distinct().count()).isEqualTo(1_203);
    }

    @Test
    void runAfterDelaysTheDueTimeOnTheDatabaseClockAndRunAtIsKeptAsGiven() {
        DbTasks tasks = producer();
        Task delayed = tasks.enqueue(TaskRequest.builder(KIND)
                        .runAfter(Duration.ofMinutes(30))
                        .build())
                .task();
        assertThat(Duration.between(delayed.createdAt(), delayed.runAt()))
                .isCloseTo(Duration.ofMinutes(30), Duration.ofMillis(500));

        java.time.Instant at = java.time.Instant.parse("2031-01-02T03:04:05.123456Z");
        Task scheduled =
                tasks.enqueue(TaskRequest.builder(KIND).runAt(at).build()).task();
        assertThat(scheduled.runAt()).isEqualTo(at);

        Task now = tasks.enqueue(TaskRequest.of(KIND, null)).task();
        assertThat(Duration.between(now.createdAt(), now.runAt()).abs()).isLessThan(Duration.ofMillis(500));
    }
}
