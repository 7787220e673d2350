package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.QueueStateCount;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.workflow.Workflow;
import io.dbtasks.workflow.WorkflowRun;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The overview's counts by queue and state ({@link DbTasks#stateCounts()}) against a full GROUP BY
 * of the task table, before, while and after the engine counts closed hours of finished tasks, and
 * after retention, retries, revivals and deletes take counted tasks out of their hours. Run once per
 * database.
 */
public abstract class HistoryCountsContract extends EngineHarness {
    static final String KIND = "history.kind";

    /** The start of the hour {@code hoursAgo} hours before the current one, plus {@code minutes}. */
    private static Instant hour(int hoursAgo, int minutes) {
        return Instant.now()
                .truncatedTo(ChronoUnit.HOURS)
                .minus(Duration.ofHours(hoursAgo))
                .plus(Duration.ofMinutes(minutes));
    }

    /** Enqueues a task on {@code queue} and makes it {@code status}, finished at {@code finishedAt}. */
    private long finished(DbTasks tasks, String queue, TaskStatus status, Instant finishedAt) {
        long id = tasks.enqueue(
                        TaskRequest.builder(KIND).queue(queue).maxAttempts(1).build())
                .task()
                .id();
        sql(
                "UPDATE dbtasks_task SET status = ?, attempt = 1, finished_at = ? WHERE id = ?",
                status.name(),
                finishedAt,
                id);
        return id;
    }

    /** Tasks finished in four past hours and the current one, two queues, every finished state. */
    private List<Long> history(DbTasks tasks) {
        List<Long> ids = new ArrayList<>();
        int[] hoursAgo = {50, 30, 5, 3};
        for (int h : hoursAgo) {
            for (int i = 0; i < 3; i++) {
                ids.add(finished(tasks, "a", TaskStatus.SUCCEEDED, hour(h, 10 * i)));
            }
            ids.add(finished(tasks, "b", TaskStatus.FAILED, hour(h, 59)));
            ids.add(finished(tasks, "b", TaskStatus.CANCELLED, hour(h, 0)));
        }
        ids.add(finished(tasks, "a", TaskStatus.SUCCEEDED, Instant.now()));
        tasks.enqueue(TaskRequest.builder(KIND)
                .queue("a")
                .runAfter(Duration.ofHours(2))
                .build());
        tasks.enqueue(TaskRequest.builder(KIND)
                .queue("b")
                .runAfter(Duration.ofHours(1))
                .build());
        return ids;
    }

    /** "queue status" to count and earliest run time, as {@link DbTasks#stateCounts()} says. */
    private static Map<String, String> counted(DbTasks tasks) {
        Map<String, String> out = new TreeMap<>();
        for (QueueStateCount s : tasks.stateCounts()) {
            out.put(s.queue() + " " + s.status(), s.count() + " " + micros(s.earliestRunAt()));
        }
        return out;
    }

    /** The same from one GROUP BY over the whole task table. */
    private Map<String, String> scanned() {
        Map<String, String> out = new TreeMap<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT queue, status, COUNT(*) AS n,"
                        + " MIN(CASE WHEN status = 'PENDING' THEN run_at END) AS earliest FROM dbtasks_task"
                        + " GROUP BY queue, status");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.put(
                        rs.getString(1) + " " + rs.getString(2),
                        rs.getLong(3) + " " + micros(dialect().getInstant(rs, "earliest")));
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    private static String micros(Instant t) {
        return t == null ? "-" : t.truncatedTo(ChronoUnit.MICROS).toString();
    }

    private void assertExact(DbTasks tasks) {
        assertThat(counted(tasks)).isEqualTo(scanned()).isNotEmpty();
        // A count by queue and finished state (or by queue alone) is answered from the same counts.
        for (String queue : List.of("a", "b", "c")) {
            for (TaskStatus status : List.of(TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.CANCELLED)) {
                assertThat(tasks.count(io.dbtasks.TaskQuery.builder()
                                .queue(queue)
                                .status(status)
                                .build()))
                        .as("count of %s %s", queue, status)
                        .isEqualTo(count(
                                "SELECT COUNT(*) FROM dbtasks_task WHERE queue = ? AND status = ?",
                                queue,
                                status.name()));
            }
            assertThat(tasks.count(io.dbtasks.TaskQuery.builder().queue(queue).build()))
                    .isEqualTo(count("SELECT COUNT(*) FROM dbtasks_task WHERE queue = ?", queue));
        }
    }

    private long countedHours() {
        return count("SELECT COUNT(*) FROM dbtasks_history_hour WHERE counted_at IS NOT NULL");
    }

    @Test
    void countsEqualAFullScanBeforeWhileAndAfterClosedHoursAreCounted() {
        DbTasks tasks = producer();
        history(tasks);
        assertExact(tasks);

        assertThat(tasks.countHistory(2)).isEqualTo(2);
        assertThat(countedHours()).isEqualTo(2);
        assertExact(tasks);

        assertThat(tasks.countHistory(100))
                .as("the two other closed hours; the current one stays open")
                .isEqualTo(2);
        assertThat(tasks.countHistory(100)).isZero();
        assertThat(count("SELECT SUM(n) FROM dbtasks_history_count")).isEqualTo(20);
        assertExact(tasks);

        // A task finished later, in an hour that closes after the counted ones, is counted too.
        finished(tasks, "c", TaskStatus.FAILED, hour(2, 30));
        assertExact(tasks);
        assertThat(tasks.countHistory(100)).isEqualTo(1);
        assertExact(tasks);
    }

    @Test
    void countedHoursAreReadFromTheCountsNotFromTheirRows() {
        DbTasks tasks = producer();
        history(tasks);
        assertThat(tasks.countHistory(100)).isEqualTo(4);
        Map<String, String> before = counted(tasks);

        // Rows of a counted hour deleted behind the engine's back still count: they are not read.
        sql("DELETE FROM dbtasks_task WHERE finished_at >= ? AND finished_at < ?", hour(30, 0), hour(29, 0));
        assertThat(counted(tasks)).isEqualTo(before);
        assertThat(scanned()).isNotEqualTo(before);

        // A count row is read as it is.
        sql(
                "INSERT INTO dbtasks_history_count (hour_start, queue, status, n) VALUES (?, 'ghost', 'SUCCEEDED', 7)",
                hour(50, 0));
        assertThat(counted(tasks)).containsEntry("ghost SUCCEEDED", "7 -");
    }

    @Test
    void retentionSubtractsWhatItDeletesFromCountedHours() {
        DbTasks tasks = engine(b -> b.workers(false)
                .retention(TaskStatus.SUCCEEDED, Duration.ofHours(20))
                .retention(TaskStatus.CANCELLED, Duration.ofHours(40)));
        history(tasks);
        // More than one retention batch in one hour.
        List<TaskRequest> bulk = new ArrayList<>();
        for (int i = 0; i < 1_050; i++) {
            bulk.add(TaskRequest.builder(KIND).queue("bulk").build());
        }
        tasks.enqueueAll(bulk);
        sql(
                "UPDATE dbtasks_task SET status = 'SUCCEEDED', attempt = 1, finished_at = ? WHERE queue = 'bulk'",
                hour(30, 7));
        assertThat(tasks.countHistory(100)).isEqualTo(4);
        assertExact(tasks);

        assertThat(tasks.sweepRetention()).isEqualTo(1_050 + 2 * 3 + 1);
        assertExact(tasks);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_history_count WHERE hour_start = ?", hour(50, 0)))
                .as("only the FAILED task is left of the oldest hour")
                .isEqualTo(1);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_history_count WHERE n <= 0"))
                .isZero();
    }

    @Test
    void retryRunNowAndDeleteOfCountedTasksLeaveTheirHours() {
        DbTasks tasks = producer();
        List<Long> ids = history(tasks);
        long failed = finished(tasks, "r", TaskStatus.FAILED, hour(5, 20));
        long cancelled = finished(tasks, "r", TaskStatus.CANCELLED, hour(5, 21));
        long succeeded = finished(tasks, "r", TaskStatus.SUCCEEDED, hour(2, 1));
        long uncounted = finished(tasks, "r", TaskStatus.FAILED, Instant.now());
        assertThat(tasks.countHistory(100)).isEqualTo(5);

        assertThat(tasks.retry(failed).status()).isEqualTo(TaskStatus.PENDING);
        assertExact(tasks);
        assertThat(tasks.runNow(cancelled).status()).isEqualTo(TaskStatus.PENDING);
        assertExact(tasks);
        tasks.delete(succeeded);
        assertExact(tasks);
        tasks.delete(ids.get(0)); // SUCCEEDED, 50 hours ago
        assertExact(tasks);
        tasks.retry(uncounted);
        assertExact(tasks);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_history_count WHERE queue = 'r'"))
                .as("each count of queue r reached 0 and was deleted")
                .isZero();
    }

    @Test
    void aRetryInAnHourNotYetCountedIsCountedAsItIsWhenTheHourIs() {
        DbTasks tasks = producer();
        history(tasks);
        long failed = finished(tasks, "r", TaskStatus.FAILED, hour(2, 20));
        long deleted = finished(tasks, "r", TaskStatus.SUCCEEDED, hour(2, 30));
        assertThat(tasks.countHistory(2)).isEqualTo(2); // the hours 50 and 30 hours ago

        tasks.retry(failed);
        tasks.delete(deleted);
        assertExact(tasks);
        assertThat(tasks.countHistory(100)).isEqualTo(2);
        assertExact(tasks);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_history_count WHERE queue = 'r'"))
                .isZero();
    }

    @Test
    void aRetriedWorkflowStepRevivesItsCancelledDependentOutOfItsCountedHour() {
        DbTasks tasks = producer();
        history(tasks);
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("revive")
                        .step("a", TaskRequest.builder(KIND).queue("wf").build())
                        .step("b", TaskRequest.builder(KIND).queue("wf").build(), "a")
                        .build());
        tasks.cancel(run.taskId("a"));
        assertThat(tasks.find(run.taskId("b")).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        sql("UPDATE dbtasks_task SET finished_at = ? WHERE queue = 'wf'", hour(4, 15));
        assertThat(tasks.countHistory(100)).isEqualTo(5);
        assertThat(count("SELECT n FROM dbtasks_history_count WHERE queue = 'wf'"))
                .isEqualTo(2);

        tasks.retry(run.taskId("a"));
        assertThat(tasks.find(run.taskId("b")).orElseThrow().status()).isEqualTo(TaskStatus.WAITING);
        assertExact(tasks);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_history_count WHERE queue = 'wf'"))
                .isZero();
    }

    @Test
    void retentionOfAWholeWorkflowSubtractsItsSteps() {
        DbTasks tasks = engine(b -> b.workers(false).retention(TaskStatus.CANCELLED, Duration.ofHours(1)));
        history(tasks);
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("swept")
                        .step("a", TaskRequest.builder(KIND).queue("wf").build())
                        .step("b", TaskRequest.builder(KIND).queue("wf").build(), "a")
                        .build());
        assertThat(tasks.workflows().cancel(run.id())).isEqualTo(2);
        sql("UPDATE dbtasks_task SET finished_at = ? WHERE queue = 'wf'", hour(4, 15));
        assertThat(tasks.countHistory(100)).isEqualTo(5);
        assertExact(tasks);

        assertThat(tasks.sweepRetention()).isEqualTo(2 + 4);
        assertExact(tasks);
        assertThat(tasks.workflows().find(run.id())).isEmpty();
    }

    @Test
    void retriesAndDeletesConcurrentWithTheRollupLeaveTheCountsExact() throws Exception {
        DbTasks tasks = producer();
        List<Long> ids = new ArrayList<>();
        for (int h = 2; h <= 13; h++) {
            for (int i = 0; i < 20; i++) {
                ids.add(finished(
                        tasks, "q" + (i % 3), i % 2 == 0 ? TaskStatus.FAILED : TaskStatus.SUCCEEDED, hour(h, i * 2)));
            }
        }
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> work = new ArrayList<>();
            work.add(pool.submit(() -> {
                while (tasks.countHistory(1) > 0) {
                    // one hour per call, so actions interleave with many rollups
                }
            }));
            for (int t = 0; t < 2; t++) {
                int offset = t;
                work.add(pool.submit(() -> {
                    for (int i = offset; i < ids.size(); i += 5) {
                        long id = ids.get(i);
                        if (i % 2 == 0) {
                            tasks.retry(id);
                        } else {
                            tasks.delete(id);
                        }
                    }
                }));
            }
            for (Future<?> f : work) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        tasks.countHistory(100);
        assertThat(countedHours()).isEqualTo(12);
        assertExact(tasks);
    }
}
