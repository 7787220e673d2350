package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.workflow.Workflow;
import io.dbtasks.workflow.WorkflowRun;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Retention by queue ({@link DbTasks.Builder#retention(String, TaskStatus, Duration)}): a queue's
 * age for a state overrides the state's default for that queue only, rows are deleted by the age of
 * their own queue, a day of history is dropped whole only once it is older than the longest age in
 * any queue, and the hourly counts stay exact. Run once per database.
 */
public abstract class QueueRetentionContract extends EngineHarness {
    static final String KIND = "qret.kind";

    private static final Duration DEFAULT = Duration.ofDays(2);

    /** A producer engine keeping every state {@link #DEFAULT}, customised by {@code more}. */
    private DbTasks keeping(Consumer<DbTasks.Builder> more) {
        return engine(b -> {
            b.workers(false)
                    .retentionInterval(Duration.ZERO)
                    .retention(TaskStatus.SUCCEEDED, DEFAULT)
                    .retention(TaskStatus.FAILED, DEFAULT)
                    .retention(TaskStatus.CANCELLED, DEFAULT);
            more.accept(b);
        });
    }

    /** Enqueues a task on {@code queue} and makes it finished in {@code status} at {@code at}. */
    private long finished(DbTasks tasks, String queue, TaskStatus status, Instant at) {
        long id = tasks.enqueue(TaskRequest.builder(KIND).queue(queue).build())
                .task()
                .id();
        finishAt(id, status, at);
        return id;
    }

    /** {@code hours} hours before the start of the current hour, plus a few minutes. */
    private static Instant hoursAgo(int hours) {
        return Instant.now()
                .truncatedTo(ChronoUnit.HOURS)
                .minus(Duration.ofHours(hours))
                .plus(Duration.ofMinutes(7));
    }

    @Test
    void aQueueKeptShorterLosesItsOldRowsWhileAnotherQueuesRowsOfTheSameAgeStay() {
        DbTasks tasks = keeping(b -> b.retention("qret.short", TaskStatus.SUCCEEDED, Duration.ofHours(1)));
        long shortOld = finished(tasks, "qret.short", TaskStatus.SUCCEEDED, hoursAgo(3));
        long shortYoung = finished(
                tasks, "qret.short", TaskStatus.SUCCEEDED, Instant.now().minusSeconds(60));
        // The override is for SUCCEEDED only: the queue's FAILED rows keep the default.
        long shortFailed = finished(tasks, "qret.short", TaskStatus.FAILED, hoursAgo(3));
        long otherOld = finished(tasks, "qret.other", TaskStatus.SUCCEEDED, hoursAgo(3));
        assertThat(tasks.countHistory(100)).isPositive();
        assertCountsExact(tasks, List.of("qret.short", "qret.other"));

        assertThat(tasks.sweepRetention()).isEqualTo(1);

        assertThat(tasks.find(shortOld)).isEmpty();
        assertThat(tasks.find(shortYoung)).isPresent();
        assertThat(tasks.find(shortFailed)).isPresent();
        assertThat(tasks.find(otherOld)).isPresent();
        assertCountsExact(tasks, List.of("qret.short", "qret.other"));
        assertThat(count("SELECT COUNT(*) FROM dbtasks_history_count WHERE n <= 0"))
                .isZero();
        assertThat(tasks.sweepRetention()).as("a second sweep finds nothing").isZero();
    }

    @Test
    void aSweepReadsFromWhereTheLastLeftOffAndAnEnginesFirstSweepFromTheOldestRow() {
        Consumer<DbTasks.Builder> shortQueue =
                b -> b.retention("qret.short", TaskStatus.SUCCEEDED, Duration.ofHours(1));
        DbTasks tasks = keeping(shortQueue);
        long old = finished(tasks, "qret.short", TaskStatus.SUCCEEDED, hoursAgo(3));
        long otherOld = finished(tasks, "qret.other", TaskStatus.SUCCEEDED, hoursAgo(3));
        assertThat(tasks.sweepRetention()).isEqualTo(1);
        assertThat(tasks.find(old)).isEmpty();

        // Finished a little before the last sweep's cutoff, as a settle that committed late would be:
        // within the margin the next sweep reads again.
        long late = finished(
                tasks,
                "qret.short",
                TaskStatus.SUCCEEDED,
                Instant.now().minus(Duration.ofHours(1)).minus(Duration.ofMinutes(5)));
        // Back-dated far below where the last sweep left off (no settle writes such a finish): the next
        // sweep does not read there, as it does not read again the other queue's rows of that age.
        long backdated = finished(tasks, "qret.short", TaskStatus.SUCCEEDED, hoursAgo(5));
        assertThat(tasks.sweepRetention()).isEqualTo(1);
        assertThat(tasks.find(late)).isEmpty();
        assertThat(tasks.find(backdated)).isPresent();

        // An engine's first sweep reads from the oldest row.
        DbTasks another = keeping(shortQueue);
        assertThat(another.sweepRetention()).isEqualTo(1);
        assertThat(tasks.find(backdated)).isEmpty();
        assertThat(tasks.find(otherOld)).isPresent();
        assertCountsExact(tasks, List.of("qret.short", "qret.other"));
    }

    @Test
    void aQueueKeptLongerKeepsItsRowsAndTheirDayWhileOtherQueuesRowsInThatDayGo() {
        DbTasks tasks = keeping(b -> b.retention("qret.audit", TaskStatus.SUCCEEDED, Duration.ofDays(10)));
        Instant fiveDaysAgo = noonDaysAgo(5); // once: a day computed twice could straddle midnight
        int day = historyDay(fiveDaysAgo);
        long audit = finished(tasks, "qret.audit", TaskStatus.SUCCEEDED, fiveDaysAgo);
        long auditFailed = finished(tasks, "qret.audit", TaskStatus.FAILED, fiveDaysAgo);
        long other = finished(tasks, "qret.other", TaskStatus.SUCCEEDED, fiveDaysAgo);
        long otherCancelled = finished(tasks, "qret.other", TaskStatus.CANCELLED, fiveDaysAgo);
        long young = finished(tasks, "qret.other", TaskStatus.SUCCEEDED, hoursAgo(3));
        // Older than the longest age: its day goes whole.
        Instant twelveDaysAgo = noonDaysAgo(12);
        int oldDay = historyDay(twelveDaysAgo);
        long auditOld = finished(tasks, "qret.audit", TaskStatus.SUCCEEDED, twelveDaysAgo);
        assertThat(tasks.countHistory(1_000)).isPositive();
        assertCountsExact(tasks, List.of("qret.audit", "qret.other"));

        assertThat(tasks.sweepRetention()).isEqualTo(4);

        assertThat(tasks.find(audit)).isPresent();
        assertThat(tasks.find(auditFailed)).isEmpty();
        assertThat(tasks.find(other)).isEmpty();
        assertThat(tasks.find(otherCancelled)).isEmpty();
        assertThat(tasks.find(young)).isPresent();
        assertThat(tasks.find(auditOld)).isEmpty();
        if (dialect().partitionsHistory()) {
            assertThat(partitionExists("dbtasks_task", day))
                    .as("the day of a row kept longer")
                    .isTrue();
            assertThat(partitionExists("dbtasks_task", oldDay))
                    .as("a day older than the longest age")
                    .isFalse();
        }
        assertCountsExact(tasks, List.of("qret.audit", "qret.other"));
        assertThat(count("SELECT COUNT(*) FROM dbtasks_history_count WHERE n <= 0"))
                .isZero();
        assertThat(tasks.sweepRetention()).as("a second sweep finds nothing").isZero();
    }

    @Test
    void aZeroAgeKeepsAQueuesRowsForeverAndEveryDayWithThem() {
        DbTasks tasks = keeping(b -> b.retention("qret.forever", TaskStatus.FAILED, Duration.ZERO));
        Instant nineDaysAgo = noonDaysAgo(9); // once: a day computed twice could straddle midnight
        int day = historyDay(nineDaysAgo);
        long kept = finished(tasks, "qret.forever", TaskStatus.FAILED, nineDaysAgo);
        long gone = finished(tasks, "qret.other", TaskStatus.FAILED, nineDaysAgo);
        long goneToo = finished(tasks, "qret.forever", TaskStatus.SUCCEEDED, nineDaysAgo);
        assertThat(tasks.countHistory(1_000)).isPositive();

        assertThat(tasks.sweepRetention()).isEqualTo(2);

        assertThat(tasks.find(kept)).isPresent();
        assertThat(tasks.find(gone)).isEmpty();
        assertThat(tasks.find(goneToo)).isEmpty();
        if (dialect().partitionsHistory()) {
            assertThat(partitionExists("dbtasks_task", day)).isTrue();
        }
        assertCountsExact(tasks, List.of("qret.forever", "qret.other"));
    }

    @Test
    void aWorkflowStepIsOldByItsOwnQueuesAgeAndTheWorkflowLeavesWhole() {
        DbTasks tasks = keeping(b -> b.retention("qret.short", TaskStatus.SUCCEEDED, Duration.ofHours(1))
                .retention("qret.audit", TaskStatus.SUCCEEDED, Duration.ofDays(10)));
        WorkflowRun kept = tasks.workflows()
                .insert(Workflow.named("qret.kept")
                        .step("a", TaskRequest.builder(KIND).queue("qret.other").build())
                        .step("b", TaskRequest.builder(KIND).queue("qret.audit").build(), "a")
                        .build());
        finishAt(kept.taskId("a"), TaskStatus.SUCCEEDED, noonDaysAgo(4));
        finishAt(kept.taskId("b"), TaskStatus.SUCCEEDED, noonDaysAgo(4));
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("qret")
                        .step("a", TaskRequest.builder(KIND).queue("qret.short").build())
                        .step("b", TaskRequest.builder(KIND).queue("qret.other").build(), "a")
                        .build());
        long a = run.taskId("a");
        long b = run.taskId("b");
        finishAt(a, TaskStatus.SUCCEEDED, hoursAgo(3));
        finishAt(b, TaskStatus.SUCCEEDED, hoursAgo(3));

        // Step b's queue keeps SUCCEEDED for the default: the workflow stays whole.
        assertThat(tasks.sweepRetention()).isZero();
        assertThat(tasks.find(a)).isPresent();
        assertThat(tasks.workflows().find(run.id())).isPresent();

        finishAt(b, TaskStatus.SUCCEEDED, noonDaysAgo(4));
        assertThat(tasks.countHistory(1_000)).isPositive();
        assertCountsExact(tasks, List.of("qret.short", "qret.other"));
        assertThat(tasks.sweepRetention()).isEqualTo(2);
        assertThat(tasks.find(a)).isEmpty();
        assertThat(tasks.find(b)).isEmpty();
        assertThat(tasks.workflows().find(run.id())).isEmpty();
        // Older than the default but younger than its queue's age: step b keeps its workflow whole.
        assertThat(tasks.find(kept.taskId("a"))).isPresent();
        assertThat(tasks.find(kept.taskId("b"))).isPresent();
        assertThat(tasks.workflows().find(kept.id())).isPresent();
        assertCountsExact(tasks, List.of("qret.short", "qret.other", "qret.audit"));
    }

    @Test
    void theBuilderRefusesAnUnfinishedStateANegativeAgeAndABlankQueue() {
        DbTasks.Builder b = DbTasks.builder(dataSource());
        assertThatThrownBy(() -> b.retention("q", TaskStatus.PENDING, Duration.ofDays(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.retention("q", TaskStatus.WAITING, Duration.ofDays(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.retention("q", TaskStatus.SUCCEEDED, Duration.ofDays(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.retention(" ", TaskStatus.SUCCEEDED, Duration.ofDays(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.retention((String) null, TaskStatus.SUCCEEDED, Duration.ofDays(1)))
                .isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> b.retention(TaskStatus.WAITING, Duration.ofDays(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
