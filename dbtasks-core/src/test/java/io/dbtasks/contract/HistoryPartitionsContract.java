package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.NonRetryableException;
import io.dbtasks.Page;
import io.dbtasks.Task;
import io.dbtasks.TaskFilter;
import io.dbtasks.TaskQuery;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskSlice;
import io.dbtasks.TaskStatus;
import io.dbtasks.workflow.Workflow;
import io.dbtasks.workflow.WorkflowRun;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * History kept by the day a task finished ({@code history_day}): reads that span days, retention by
 * day, and retries out of a day. Where the database partitions history by day (PostgreSQL, MariaDB) each day
 * is a partition of its own, dropped whole; elsewhere (H2) the same rows are deleted by their age,
 * and the same behaviour holds. Run once per database.
 */
public abstract class HistoryPartitionsContract extends EngineHarness {
    static final String OK = "days.ok";
    static final String BAD = "days.bad";

    private static final Duration LONGEST = Duration.ofDays(2);

    /** An engine with the two kinds, every finished state kept {@link #LONGEST}, no periodic sweep. */
    private DbTasks worker(Consumer<DbTasks.Builder> more) {
        return engine(b -> {
            b.handler(OK, Void.class, (ctx, p) -> {});
            b.handler(BAD, Void.class, (ctx, p) -> {
                throw new NonRetryableException("refused");
            });
            b.queue("default", 4)
                    .retentionInterval(Duration.ZERO)
                    .retention(TaskStatus.SUCCEEDED, LONGEST)
                    .retention(TaskStatus.FAILED, LONGEST)
                    .retention(TaskStatus.CANCELLED, LONGEST);
            more.accept(b);
        });
    }

    private boolean mariaDb() {
        return dialect().name().equals("mariadb");
    }

    private static String dayName(int day) {
        return "p" + LocalDate.ofEpochDay(day).format(DateTimeFormatter.BASIC_ISO_DATE);
    }

    /**
     * The rows of {@code table}'s partition of {@code day}, to read FROM: a table of its own on
     * PostgreSQL ({@code dbtasks_task_pYYYYMMDD}), a named partition of the table on MariaDB.
     */
    private String partition(String table, int day) {
        return mariaDb() ? table + " PARTITION (" + dayName(day) + ")" : table + "_" + dayName(day);
    }

    /** The live partition of the task table, to read FROM. */
    private String live() {
        return mariaDb() ? "dbtasks_task PARTITION (p_live)" : "dbtasks_task_live";
    }

    private long historyDayOf(long id) {
        return count("SELECT history_day FROM dbtasks_task WHERE id = ?", id);
    }

    @Test
    void listsSearchesAndCountsThatSpanDaysReturnEveryTaskNewestFirst() {
        DbTasks tasks = producer();
        // Ids interleave the days, so every page of a walk by id reads several days' rows.
        int[] daysAgo = {3, 0, 1, 2, 3, 1, 0, 2, 1, 3, 2, 0};
        List<Long> all = new ArrayList<>();
        List<Long> succeeded = new ArrayList<>();
        List<Long> failed = new ArrayList<>();
        java.util.Map<Integer, Long> perDay = new java.util.TreeMap<>();
        for (int i = 0; i < daysAgo.length; i++) {
            long id = tasks.enqueue(TaskRequest.builder(OK).maxAttempts(1).build())
                    .task()
                    .id();
            TaskStatus status = i % 3 == 0 ? TaskStatus.FAILED : TaskStatus.SUCCEEDED;
            Instant at = daysAgo[i] == 0
                    ? Instant.now().minusSeconds(60).truncatedTo(ChronoUnit.MILLIS)
                    : noonDaysAgo(daysAgo[i]);
            perDay.merge(finishAt(id, status, at), 1L, Long::sum);
            all.add(id);
            (status == TaskStatus.FAILED ? failed : succeeded).add(id);
            Task found = tasks.find(id).orElseThrow();
            assertThat(found.status()).isEqualTo(status);
            assertThat(found.finishedAt()).isEqualTo(at);
        }
        long live1 = tasks.enqueue(
                        TaskRequest.builder(OK).runAfter(Duration.ofHours(1)).build())
                .task()
                .id();
        long live2 = tasks.enqueue(TaskRequest.builder(OK).build()).task().id();
        all.add(live1);
        all.add(live2);
        all.sort(Comparator.reverseOrder());
        succeeded.sort(Comparator.reverseOrder());
        failed.sort(Comparator.reverseOrder());

        assertThat(walk(tasks, TaskQuery.builder().kind(OK).build(), 5)).containsExactlyElementsOf(all);
        assertThat(walk(tasks, TaskQuery.builder().status(TaskStatus.SUCCEEDED).build(), 2))
                .containsExactlyElementsOf(succeeded);
        assertThat(walk(tasks, TaskQuery.builder().status(TaskStatus.FAILED).build(), 3))
                .containsExactlyElementsOf(failed);
        assertThat(tasks.count(TaskQuery.builder().kind(OK).build())).isEqualTo(14);
        assertThat(tasks.count(TaskQuery.builder().status(TaskStatus.SUCCEEDED).build()))
                .isEqualTo(8);
        assertThat(tasks.count(TaskQuery.builder().status(TaskStatus.FAILED).build()))
                .isEqualTo(4);
        assertThat(tasks.count(TaskQuery.builder().status(TaskStatus.PENDING).build()))
                .isEqualTo(2);
        // Below a cursor in the middle: the rest of the walk, across the remaining days.
        assertThat(tasks.count(TaskQuery.builder().kind(OK).build().before(all.get(6))))
                .isEqualTo(7);

        List<Long> listed = new ArrayList<>();
        for (int page = 0; ; page++) {
            Page<Task> p = tasks.list(new TaskFilter(TaskStatus.SUCCEEDED, null, OK), page, 3);
            assertThat(p.total()).isEqualTo(8);
            if (p.items().isEmpty()) {
                break;
            }
            p.items().forEach(t -> listed.add(t.id()));
        }
        assertThat(listed).containsExactlyElementsOf(succeeded);

        if (dialect().partitionsHistory()) {
            assertThat(perDay).hasSizeGreaterThanOrEqualTo(4);
            perDay.forEach((day, n) -> assertThat(count("SELECT COUNT(*) FROM " + partition("dbtasks_task", day)))
                    .as("tasks in the partition of day %s", LocalDate.ofEpochDay(day))
                    .isEqualTo(n));
            assertThat(count("SELECT COUNT(*) FROM " + live())).isEqualTo(2);
        }
    }

    /** Every id a keyset walk of {@code query} returns, page by page. */
    private static List<Long> walk(DbTasks tasks, TaskQuery query, int size) {
        List<Long> ids = new ArrayList<>();
        TaskQuery q = query;
        for (int pages = 0; pages < 100; pages++) {
            TaskSlice<Task> slice = tasks.search(q, size);
            assertThat(slice.items()).hasSizeLessThanOrEqualTo(size);
            slice.items().forEach(t -> ids.add(t.id()));
            if (slice.next() == null) {
                return ids;
            }
            q = query.before(slice.next());
        }
        throw new AssertionError("the walk did not end: " + ids);
    }

    @Test
    void aDayOlderThanTheLongestAgeGoesWholeAndAYoungerDayStays() {
        DbTasks tasks = worker(b -> {});
        long old1 = tasks.enqueue(
                        TaskRequest.builder(OK).idempotencyKey("days-old-1").build())
                .task()
                .id();
        long old2 = tasks.enqueue(TaskRequest.builder(BAD)
                        .idempotencyKey("days-old-2")
                        .maxAttempts(1)
                        .build())
                .task()
                .id();
        long young = tasks.enqueue(
                        TaskRequest.builder(OK).idempotencyKey("days-young").build())
                .task()
                .id();
        long live = tasks.enqueue(TaskRequest.builder(OK)
                        .idempotencyKey("days-live")
                        .runAfter(Duration.ofHours(1))
                        .build())
                .task()
                .id();
        tasks.start();
        awaitStatus(tasks, old1, TaskStatus.SUCCEEDED);
        awaitStatus(tasks, old2, TaskStatus.FAILED);
        awaitStatus(tasks, young, TaskStatus.SUCCEEDED);
        // A live task created long ago is still live: its age does not matter.
        sql("UPDATE dbtasks_task SET created_at = ? WHERE id = ?", Instant.now().minus(Duration.ofDays(400)), live);
        int oldDay = finishAt(old1, TaskStatus.SUCCEEDED, noonDaysAgo(5));
        finishAt(old2, TaskStatus.FAILED, noonDaysAgo(5));
        // Finished one day ago: its day ended less than LONGEST ago.
        int youngDay = finishAt(young, TaskStatus.SUCCEEDED, noonDaysAgo(1));
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE task_id IN (?, ?)", old1, old2))
                .isEqualTo(2);
        if (dialect().partitionsHistory()) {
            assertThat(count("SELECT COUNT(*) FROM " + partition("dbtasks_task", oldDay)))
                    .isEqualTo(2);
            assertThat(count("SELECT COUNT(*) FROM " + partition("dbtasks_attempt", oldDay)))
                    .isEqualTo(2);
        }

        assertThat(tasks.sweepRetention()).as("tasks removed").isEqualTo(2);

        assertThat(tasks.find(old1)).isEmpty();
        assertThat(tasks.find(old2)).isEmpty();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE task_id IN (?, ?)", old1, old2))
                .as("attempts of the day gone")
                .isZero();
        assertThat(tasks.find(young)).map(Task::status).contains(TaskStatus.SUCCEEDED);
        assertThat(tasks.attempts(young)).hasSize(1);
        assertThat(tasks.find(live)).map(Task::status).contains(TaskStatus.PENDING);
        if (dialect().partitionsHistory()) {
            assertThat(partitionExists("dbtasks_task", oldDay)).isFalse();
            assertThat(partitionExists("dbtasks_attempt", oldDay)).isFalse();
            assertThat(partitionExists("dbtasks_task", youngDay)).isTrue();
            assertThat(count("SELECT COUNT(*) FROM " + partition("dbtasks_task", youngDay)))
                    .isEqualTo(1);
        }

        // The dropped day's keys are free again; the younger day's and the live task's are not.
        EnqueueResult again = tasks.enqueue(TaskRequest.builder(OK)
                .idempotencyKey("days-old-1")
                .runAfter(Duration.ofHours(1))
                .build());
        assertThat(again.duplicate()).isFalse();
        assertThat(again.task().id()).isNotEqualTo(old1);
        EnqueueResult again2 = tasks.enqueue(TaskRequest.builder(OK)
                .idempotencyKey("days-old-2")
                .runAfter(Duration.ofHours(1))
                .build());
        assertThat(again2.duplicate()).isFalse();
        EnqueueResult youngAgain = tasks.enqueue(
                TaskRequest.builder(OK).idempotencyKey("days-young").build());
        assertThat(youngAgain.duplicate()).isTrue();
        assertThat(youngAgain.task().id()).isEqualTo(young);
        EnqueueResult liveAgain = tasks.enqueue(
                TaskRequest.builder(OK).idempotencyKey("days-live").build());
        assertThat(liveAgain.duplicate()).isTrue();
        assertThat(liveAgain.task().id()).isEqualTo(live);

        assertThat(tasks.sweepRetention()).as("a second sweep finds nothing").isZero();
        assertThat(tasks.find(young)).isPresent();
    }

    @Test
    void aWorkflowWithAnOldFinishedStepAndALiveStepStaysWholeUntilAllOfItIsOld() {
        DbTasks tasks = worker(b -> b.workers(false));
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("days")
                        .step("a", TaskRequest.of(OK, null))
                        .step("b", TaskRequest.of(OK, null), "a")
                        .build());
        long a = run.taskId("a");
        long b = run.taskId("b");
        int day = finishAt(a, TaskStatus.SUCCEEDED, noonDaysAgo(5));
        assertThat(tasks.find(b)).map(Task::status).contains(TaskStatus.WAITING);

        assertThat(tasks.sweepRetention()).isZero();

        assertThat(tasks.find(a)).map(Task::status).contains(TaskStatus.SUCCEEDED);
        assertThat(tasks.find(b)).map(Task::status).contains(TaskStatus.WAITING);
        assertThat(tasks.workflows().find(run.id())).isPresent();
        if (dialect().partitionsHistory()) {
            assertThat(partitionExists("dbtasks_task", day))
                    .as("the day of a step of a workflow still kept")
                    .isTrue();
            assertThat(historyDayOf(a)).isEqualTo(day);
        }

        // Once every step is old, the workflow goes whole, and its day with it.
        finishAt(b, TaskStatus.CANCELLED, noonDaysAgo(5));
        assertThat(tasks.sweepRetention()).isEqualTo(2);
        assertThat(tasks.find(a)).isEmpty();
        assertThat(tasks.find(b)).isEmpty();
        assertThat(tasks.workflows().find(run.id())).isEmpty();
        if (dialect().partitionsHistory()) {
            assertThat(partitionExists("dbtasks_task", day)).isFalse();
        }
    }

    @Test
    void aRetryOfATaskInADayMovesItBackToLiveAndItFinishesIntoToday() {
        AtomicBoolean broken = new AtomicBoolean(true);
        Consumer<DbTasks.Builder> flaky = b -> b.handler("days.flaky", Void.class, (ctx, p) -> {
            if (broken.get()) {
                throw new NonRetryableException("broken");
            }
        });
        DbTasks first = worker(flaky);
        long id = first.enqueue(TaskRequest.builder("days.flaky").maxAttempts(1).build())
                .task()
                .id();
        first.start();
        awaitStatus(first, id, TaskStatus.FAILED);
        first.stop(Duration.ofSeconds(5));
        int oldDay = finishAt(id, TaskStatus.FAILED, noonDaysAgo(3));
        if (dialect().partitionsHistory()) {
            assertThat(count("SELECT COUNT(*) FROM " + partition("dbtasks_task", oldDay) + " WHERE id = ?", id))
                    .isEqualTo(1);
        }

        DbTasks producer = producer();
        Task retried = producer.retry(id);
        assertThat(retried.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(retried.finishedAt()).isNull();
        assertThat(historyDayOf(id)).as("live again").isZero();
        if (dialect().partitionsHistory()) {
            assertThat(count("SELECT COUNT(*) FROM " + live() + " WHERE id = ?", id))
                    .isEqualTo(1);
            assertThat(count("SELECT COUNT(*) FROM " + partition("dbtasks_task", oldDay) + " WHERE id = ?", id))
                    .isZero();
        }

        broken.set(false);
        DbTasks second = worker(flaky);
        second.start();
        Task done = awaitStatus(second, id, TaskStatus.SUCCEEDED);
        assertThat(done.attempt()).isEqualTo(2);
        long today = count("SELECT " + dialect().historyDay(dialect().now()));
        assertThat(historyDayOf(id)).isEqualTo(historyDay(done.finishedAt())).isEqualTo(today);
        assertThat(second.attempts(id)).hasSize(2);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE task_id = ? AND history_day = ?", id, oldDay))
                .as("the first attempt stays in its day")
                .isEqualTo(1);
        if (dialect().partitionsHistory()) {
            assertThat(count("SELECT COUNT(*) FROM " + partition("dbtasks_task", (int) today) + " WHERE id = ?", id))
                    .isEqualTo(1);
            assertThat(count("SELECT COUNT(*) FROM " + live() + " WHERE id = ?", id))
                    .isZero();
        }
    }
}
