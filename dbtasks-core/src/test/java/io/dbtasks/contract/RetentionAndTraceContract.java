package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.DbTasksHealth;
import io.dbtasks.NonRetryableException;
import io.dbtasks.Task;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.event.TaskEvent;
import io.dbtasks.testing.EventRecorder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * Retention of finished tasks (batched, by status and age, attempts with them), the trace parent
 * stored with a task, and the health snapshot's worker fields. Run once per database.
 */
public abstract class RetentionAndTraceContract extends EngineHarness {
    static final String OK = "retention.ok";
    static final String BAD = "retention.bad";

    private DbTasks worker(java.util.function.Consumer<DbTasks.Builder> more) {
        return engine(b -> {
            b.handler(OK, Void.class, (ctx, p) -> {});
            b.handler(BAD, Void.class, (ctx, p) -> {
                throw new NonRetryableException("refused");
            });
            b.queue("default", 16);
            more.accept(b);
        });
    }

    @Test
    void sweepDeletesFinishedTasksAndTheirAttemptsPastTheirStatusAgeInBatchesAndKeepsTheRest() {
        DbTasks tasks = worker(b -> b.retentionInterval(Duration.ZERO));
        List<TaskRequest> requests = new ArrayList<>();
        for (int i = 0; i < 2_150; i++) {
            requests.add(TaskRequest.of(OK, null));
        }
        tasks.enqueueAll(requests);
        List<Long> failed = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            failed.add(tasks.enqueue(TaskRequest.builder(BAD).maxAttempts(1).build())
                    .task()
                    .id());
        }
        tasks.start();
        eventually()
                .until(() ->
                        count("SELECT COUNT(*) FROM dbtasks_task WHERE status IN ('SUCCEEDED', 'FAILED')") == 2_153);
        long pending = tasks.enqueue(
                        TaskRequest.builder(OK).runAfter(Duration.ofHours(1)).build())
                .task()
                .id();
        long minId = count("SELECT MIN(id) FROM dbtasks_task WHERE kind = ?", OK);
        // 2,050 successes finished 8 days ago (past the 7-day default), 100 recent ones stay.
        finishedAt(Instant.now().minus(Duration.ofDays(8)), "kind = ? AND id < ?", OK, minId + 2_050);
        finishedAt(Instant.now().minus(Duration.ofDays(8)), "kind = ?", BAD);
        long attemptsBefore = count("SELECT COUNT(*) FROM dbtasks_attempt");

        long deleted = tasks.sweepRetention();

        assertThat(deleted).isEqualTo(2_050);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'SUCCEEDED'"))
                .isEqualTo(100);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'FAILED'"))
                .as("FAILED is kept 30 days by default")
                .isEqualTo(3);
        assertThat(tasks.find(pending)).map(Task::status).contains(TaskStatus.PENDING);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt")).isEqualTo(attemptsBefore - 2_050);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt a WHERE NOT EXISTS"
                        + " (SELECT 1 FROM dbtasks_task t WHERE t.id = a.task_id)"))
                .as("no attempt outlives its task")
                .isZero();

        // Past the longest age: where history is kept by day, the day they finished goes whole.
        Instant monthAgo = Instant.now().minus(Duration.ofDays(31));
        failed.forEach(id -> finishAt(id, TaskStatus.FAILED, monthAgo));
        assertThat(tasks.sweepRetention()).isEqualTo(3);
        assertThat(failed).allSatisfy(id -> assertThat(tasks.find(id)).isEmpty());
    }

    @Test
    void zeroAgeKeepsAStatusAndAStartedEngineSweepsOnItsInterval() {
        DbTasks tasks = worker(b -> b.retentionInterval(Duration.ofMillis(200))
                .retention(TaskStatus.SUCCEEDED, Duration.ofHours(1))
                .retention(TaskStatus.FAILED, Duration.ZERO));
        long ok = tasks.enqueue(TaskRequest.of(OK, null)).task().id();
        long bad = tasks.enqueue(TaskRequest.builder(BAD).maxAttempts(1).build())
                .task()
                .id();
        tasks.start();
        awaitStatus(tasks, ok, TaskStatus.SUCCEEDED);
        awaitStatus(tasks, bad, TaskStatus.FAILED);
        sql("UPDATE dbtasks_task SET finished_at = ?", Instant.now().minus(Duration.ofDays(400)));

        eventually().until(() -> tasks.find(ok).isEmpty());
        assertThat(tasks.find(bad)).as("FAILED has age zero: kept").isPresent();
    }

    @Test
    void traceParentIsStoredHandedToTheHandlerAndCarriedByEvents() {
        String traceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        Map<Long, String> seen = new ConcurrentHashMap<>();
        Map<Long, Instant> seenRunAt = new ConcurrentHashMap<>();
        EventRecorder events = new EventRecorder();
        DbTasks tasks = engine(b -> b.handler("traced", Void.class, (ctx, p) -> {
                    seen.put(ctx.taskId(), String.valueOf(ctx.traceParent()));
                    seenRunAt.put(ctx.taskId(), ctx.runAt());
                })
                .listener(events));
        Task stored = tasks.enqueue(
                        TaskRequest.builder("traced").traceParent(traceParent).build())
                .task();
        long plain = tasks.enqueue(TaskRequest.of("traced", null)).task().id();
        assertThat(stored.traceParent()).isEqualTo(traceParent);
        assertThat(tasks.find(stored.id())).map(Task::traceParent).contains(traceParent);
        assertThat(tasks.find(plain)).map(Task::traceParent).isEmpty();

        tasks.start();
        awaitStatus(tasks, stored.id(), TaskStatus.SUCCEEDED);
        awaitStatus(tasks, plain, TaskStatus.SUCCEEDED);
        eventually().until(() -> events.of(stored.id()).stream().anyMatch(e -> e.type() == TaskEvent.Type.SUCCEEDED));
        assertThat(events.of(stored.id()))
                .filteredOn(e -> e.type() == TaskEvent.Type.STARTED)
                .singleElement()
                .satisfies(e -> {
                    assertThat(e.traceParent()).isEqualTo(traceParent);
                    assertThat(e.runAt()).isEqualTo(stored.runAt());
                });
        assertThat(seenRunAt.get(stored.id())).isEqualTo(stored.runAt());
        assertThat(seen.get(stored.id())).isEqualTo(traceParent);
        assertThat(seen.get(plain)).isEqualTo("null");
    }

    @Test
    void healthNamesClaimLoopsRescueAndListening() {
        DbTasks producer = producer();
        assertThat(producer.health().workersStarted()).isFalse();
        assertThat(producer.health().claimLoops()).isZero();

        DbTasks tasks = worker(b -> b.queue("other", 2));
        assertThat(tasks.health().workersStarted()).isFalse();
        tasks.start();
        eventually().untilAsserted(() -> {
            DbTasksHealth h = tasks.health();
            assertThat(h.workersStarted()).isTrue();
            assertThat(h.claimLoops()).isEqualTo(2);
            assertThat(h.claimLoopsAlive()).isEqualTo(2);
            assertThat(h.oldestClaimLoopAt()).isAfter(Instant.now().minusSeconds(5));
            assertThat(h.lastRescueAt()).isNotNull();
            if (database() == io.dbtasks.testing.TestDatabase.POSTGRESQL) {
                assertThat(h.listening()).isTrue();
            } else {
                assertThat(h.listening()).isNull();
            }
        });
        tasks.stop(Duration.ofSeconds(5));
        assertThat(tasks.health().workersStarted()).isFalse();
        assertThat(tasks.health().claimLoopsAlive()).isZero();
    }

    @Test
    void longRunningThresholdsByKindWinOverQueueWinOverTheEngines() throws Exception {
        EventRecorder events = new EventRecorder();
        java.util.concurrent.CountDownLatch release = latch();
        DbTasks tasks = engine(b -> b.handler("slow.a", Void.class, (ctx, p) -> awaitLatch(release))
                .handler("slow.b", Void.class, (ctx, p) -> awaitLatch(release))
                .handler("slow.c", Void.class, (ctx, p) -> awaitLatch(release))
                .queue("default", 2)
                .queue("fast", 2)
                .longRunningThreshold(Duration.ofHours(1))
                .longRunningThresholdForQueue("fast", Duration.ofMillis(100))
                .longRunningThresholdForKind("slow.b", Duration.ZERO)
                .longRunningThresholdForKind("slow.c", Duration.ofMillis(100))
                .listener(events));
        long a = tasks.enqueue(TaskRequest.builder("slow.a").queue("fast").build())
                .task()
                .id();
        long b = tasks.enqueue(TaskRequest.builder("slow.b").queue("fast").build())
                .task()
                .id();
        long c = tasks.enqueue(TaskRequest.builder("slow.c").build()).task().id();
        long d = tasks.enqueue(TaskRequest.builder("slow.a").build()).task().id();
        tasks.start();
        eventually()
                .until(() -> events.of(a).stream().anyMatch(e -> e.type() == TaskEvent.Type.LONG_RUNNING)
                        && events.of(c).stream().anyMatch(e -> e.type() == TaskEvent.Type.LONG_RUNNING));
        Thread.sleep(500); // b and d stay below their thresholds (never, one hour)
        release.countDown();
        for (long id : List.of(a, b, c, d)) {
            awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
        }
        assertThat(events.of(a))
                .filteredOn(e -> e.type() == TaskEvent.Type.LONG_RUNNING)
                .hasSize(1);
        assertThat(events.of(c))
                .filteredOn(e -> e.type() == TaskEvent.Type.LONG_RUNNING)
                .hasSize(1);
        assertThat(events.of(b)).noneMatch(e -> e.type() == TaskEvent.Type.LONG_RUNNING);
        assertThat(events.of(d)).noneMatch(e -> e.type() == TaskEvent.Type.LONG_RUNNING);
    }

    @Test
    void queueDepthsCountPendingRunningFailedDueAndTheOldestDueAge() {
        DbTasks tasks = producer();
        for (int i = 0; i < 3; i++) {
            tasks.enqueue(TaskRequest.builder(OK).queue("q1").build());
        }
        tasks.enqueue(TaskRequest.builder(OK)
                .queue("q1")
                .runAfter(Duration.ofHours(1))
                .build());
        long running = tasks.enqueue(TaskRequest.builder(OK).queue("q2").build())
                .task()
                .id();
        long dead = tasks.enqueue(TaskRequest.builder(OK).queue("q2").build())
                .task()
                .id();
        sql(
                "UPDATE dbtasks_task SET status = 'RUNNING', lease_owner = 'w', lease_token = 1, lease_expires_at = ?,"
                        + " attempt = 1 WHERE id = ?",
                Instant.now().plusSeconds(60),
                running);
        sql("UPDATE dbtasks_task SET status = 'FAILED', finished_at = ? WHERE id = ?", Instant.now(), dead);
        sql(
                "UPDATE dbtasks_task SET run_at = ? WHERE queue = 'q1' AND run_at < ?",
                Instant.now().minus(Duration.ofMinutes(10)),
                Instant.now().plusSeconds(60));

        java.util.Map<String, io.dbtasks.QueueDepth> depths = new java.util.HashMap<>();
        tasks.queueDepths().forEach(d -> depths.put(d.queue(), d));

        assertThat(depths).containsOnlyKeys("q1", "q2");
        io.dbtasks.QueueDepth q1 = depths.get("q1");
        assertThat(q1.pending()).isEqualTo(4);
        assertThat(q1.dueNow()).isEqualTo(3);
        assertThat(q1.running()).isZero();
        assertThat(q1.oldestDueAge()).isBetween(Duration.ofMinutes(9), Duration.ofMinutes(11));
        io.dbtasks.QueueDepth q2 = depths.get("q2");
        assertThat(q2.pending()).isZero();
        assertThat(q2.running()).isEqualTo(1);
        assertThat(q2.failed()).isEqualTo(1);
        assertThat(q2.oldestDueAge()).isEqualTo(Duration.ZERO);
    }
}
