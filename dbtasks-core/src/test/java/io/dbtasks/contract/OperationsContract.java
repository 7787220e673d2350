package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.Attempt;
import io.dbtasks.AttemptOutcome;
import io.dbtasks.DbTasks;
import io.dbtasks.IllegalTransitionException;
import io.dbtasks.NonRetryableException;
import io.dbtasks.RetryPolicy;
import io.dbtasks.Task;
import io.dbtasks.TaskNotFoundException;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Operator actions: retry, cancel, reschedule, run now. Run once per database by the subclasses. */
public abstract class OperationsContract extends EngineHarness {
    static final String KIND = "invoice.send";
    static final long MISSING_ID = 987_654_321L;

    private final AtomicInteger runs = new AtomicInteger();
    private final AtomicBoolean broken = new AtomicBoolean();

    /** An engine whose handler counts runs and fails non-retryably while {@link #broken} is set. */
    private DbTasks worker() {
        return engine(b -> b.handler(KIND, Void.class, (ctx, p) -> {
            runs.incrementAndGet();
            if (broken.get()) {
                throw new NonRetryableException("mail server refused the invoice");
            }
        }));
    }

    private static void assertRefused(Runnable action, TaskStatus current) {
        assertThatThrownBy(action::run)
                .isInstanceOfSatisfying(
                        IllegalTransitionException.class,
                        e -> assertThat(e.current()).isEqualTo(current))
                .hasMessageContaining(current.name());
    }

    // --- retry ---

    @Test
    void retryOfAFailedTaskSendsItBackToPendingWithOneMoreAttemptAndItRunsAgain() {
        broken.set(true);
        DbTasks first = worker();
        long id = first.enqueue(TaskRequest.builder(KIND).maxAttempts(1).build())
                .task()
                .id();
        first.start();
        Task failed = awaitStatus(first, id, TaskStatus.FAILED);
        first.stop(Duration.ofSeconds(5));
        broken.set(false);

        Task retried = producer().retry(id);

        assertThat(retried.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(retried.attempt()).isEqualTo(1);
        assertThat(retried.maxAttempts()).isEqualTo(2);
        assertThat(retried.finishedAt()).isNull();
        assertThat(retried.runAt()).isAfterOrEqualTo(failed.finishedAt());
        DbTasks second = worker();
        second.start();
        Task done = awaitStatus(second, id, TaskStatus.SUCCEEDED);
        assertThat(done.attempt()).isEqualTo(2);
        assertThat(second.attempts(id))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.FAILED, AttemptOutcome.SUCCEEDED);
        assertThat(runs).hasValue(2);
    }

    @Test
    void retryWithAdditionalAttemptsGrantsThatManyMore() {
        broken.set(true);
        DbTasks tasks = worker();
        long id = tasks.enqueue(TaskRequest.builder(KIND)
                        .maxAttempts(1)
                        .retryPolicy(RetryPolicy.fixed(Duration.ZERO))
                        .build())
                .task()
                .id();
        tasks.start();
        awaitStatus(tasks, id, TaskStatus.FAILED);

        assertThat(tasks.retry(id, 3).maxAttempts()).isEqualTo(4);
        assertThatThrownBy(() -> tasks.retry(id, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void retryOfACancelledTaskRunsIt() {
        DbTasks tasks = worker();
        long id = tasks.enqueue(
                        TaskRequest.builder(KIND).runAfter(Duration.ofHours(1)).build())
                .task()
                .id();
        tasks.start();
        assertThat(tasks.cancel(id).status()).isEqualTo(TaskStatus.CANCELLED);

        tasks.retry(id);

        Task done = awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
        assertThat(done.attempt()).isEqualTo(1);
        assertThat(runs).hasValue(1);
    }

    @Test
    void retryIsRefusedForPendingRunningAndSucceededTasks() throws Exception {
        CountDownLatch started = latch();
        CountDownLatch release = latch();
        DbTasks tasks =
                engine(b -> b.handler(KIND, Void.class, (ctx, p) -> {}).handler("blocking", Void.class, (ctx, p) -> {
                    started.countDown();
                    awaitLatch(release);
                }));
        long pending = tasks.enqueue(
                        TaskRequest.builder(KIND).runAfter(Duration.ofHours(1)).build())
                .task()
                .id();
        long running = tasks.enqueue(TaskRequest.of("blocking", null)).task().id();
        long succeeded = tasks.enqueue(TaskRequest.of(KIND, null)).task().id();
        tasks.start();
        awaitLatch(started);
        awaitStatus(tasks, succeeded, TaskStatus.SUCCEEDED);
        Task pendingBefore = tasks.find(pending).orElseThrow();
        Task runningBefore = tasks.find(running).orElseThrow();
        Task succeededBefore = tasks.find(succeeded).orElseThrow();

        assertRefused(() -> tasks.retry(pending), TaskStatus.PENDING);
        assertRefused(() -> tasks.retry(running), TaskStatus.RUNNING);
        assertRefused(() -> tasks.retry(succeeded), TaskStatus.SUCCEEDED);
        assertRefused(() -> tasks.reschedule(running, Instant.now().plusSeconds(60)), TaskStatus.RUNNING);

        assertThat(tasks.find(pending)).contains(pendingBefore);
        assertThat(tasks.find(running).orElseThrow().fencingToken()).isEqualTo(runningBefore.fencingToken());
        assertThat(tasks.find(running).orElseThrow().status()).isEqualTo(TaskStatus.RUNNING);
        assertThat(tasks.find(succeeded)).contains(succeededBefore);
    }

    @Test
    void operationsOnAMissingTaskThrowTaskNotFound() {
        DbTasks tasks = producer();
        assertThat(tasks.find(MISSING_ID)).isEmpty();
        assertThatThrownBy(() -> tasks.retry(MISSING_ID))
                .isInstanceOf(TaskNotFoundException.class)
                .hasMessageContaining(String.valueOf(MISSING_ID));
        assertThatThrownBy(() -> tasks.cancel(MISSING_ID)).isInstanceOf(TaskNotFoundException.class);
        assertThatThrownBy(() -> tasks.reschedule(MISSING_ID, Instant.now())).isInstanceOf(TaskNotFoundException.class);
        assertThatThrownBy(() -> tasks.runNow("no-such-key"))
                .isInstanceOf(TaskNotFoundException.class)
                .hasMessageContaining("no-such-key");
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isZero();
    }

    // --- cancel ---

    @Test
    void cancelOfAPendingTaskTakesEffectAtOnceAndItNeverRuns() {
        DbTasks tasks = worker();
        long id = tasks.enqueue(TaskRequest.builder(KIND)
                        .runAfter(Duration.ofMillis(300))
                        .build())
                .task()
                .id();
        tasks.start();

        Task cancelled = tasks.cancel(id);

        assertThat(cancelled.status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(cancelled.finishedAt()).isNotNull();
        assertStaysIn(tasks, id, TaskStatus.CANCELLED, Duration.ofMillis(700)); // well past its due time
        assertThat(runs).hasValue(0);
        assertThat(tasks.attempts(id)).isEmpty();
    }

    /** A worker with a 1 s lease, so it heartbeats (and sees cancel requests) every 333 ms. */
    private DbTasks quickHeartbeat(io.dbtasks.TaskHandler<Void> handler) {
        return engine(b -> b.lease(Duration.ofSeconds(1)).handler("long", Void.class, handler));
    }

    @Test
    void cancelOfARunningTaskInterruptsTheHandlerAndRecordsACancelledAttempt() throws Exception {
        CountDownLatch started = latch();
        CountDownLatch interrupted = latch();
        AtomicBoolean sawRequest = new AtomicBoolean();
        DbTasks tasks = quickHeartbeat((ctx, p) -> {
            started.countDown();
            try {
                Thread.sleep(PATIENCE.toMillis());
            } catch (InterruptedException e) {
                sawRequest.set(ctx.isCancellationRequested());
                interrupted.countDown();
                throw e;
            }
        });
        long id = tasks.enqueue(TaskRequest.builder("long").maxAttempts(3).build())
                .task()
                .id();
        tasks.start();
        awaitLatch(started);

        Task requested = tasks.cancel(id);

        assertThat(requested.status()).isEqualTo(TaskStatus.RUNNING);
        assertThat(requested.cancelRequested()).isTrue();
        Task cancelled = awaitStatus(tasks, id, TaskStatus.CANCELLED);
        awaitLatch(interrupted);
        assertThat(sawRequest).isTrue();
        assertThat(cancelled.cancelRequested()).isFalse();
        assertThat(cancelled.leaseOwner()).isNull();
        assertThat(cancelled.finishedAt()).isNotNull();
        assertThat(cancelled.lastError()).containsIgnoringCase("cancel");
        assertThat(tasks.attempts(id)).singleElement().satisfies(a -> {
            assertThat(a.outcome()).isEqualTo(AttemptOutcome.CANCELLED);
            assertThat(a.attempt()).isEqualTo(1);
        });
        assertStaysIn(tasks, id, TaskStatus.CANCELLED, Duration.ofMillis(300));
    }

    @Test
    void cancelledRunningTaskWhoseHandlerTurnsTheInterruptIntoAnotherErrorIsNotRetried() throws Exception {
        CountDownLatch started = latch();
        AtomicInteger calls = new AtomicInteger();
        DbTasks tasks = quickHeartbeat((ctx, p) -> {
            calls.incrementAndGet();
            started.countDown();
            try {
                Thread.sleep(PATIENCE.toMillis());
            } catch (InterruptedException e) {
                // Common in real code: the interrupt becomes some other failure and the flag is gone.
                throw new IllegalStateException("upload aborted");
            }
        });
        long id = tasks.enqueue(TaskRequest.builder("long")
                        .maxAttempts(3)
                        .retryPolicy(RetryPolicy.fixed(Duration.ZERO))
                        .build())
                .task()
                .id();
        tasks.start();
        awaitLatch(started);

        tasks.cancel(id);

        Task cancelled = awaitStatus(tasks, id, TaskStatus.CANCELLED);
        assertThat(cancelled.attempt()).isEqualTo(1);
        assertThat(tasks.attempts(id)).extracting(Attempt::outcome).containsExactly(AttemptOutcome.CANCELLED);
        assertStaysIn(tasks, id, TaskStatus.CANCELLED, Duration.ofMillis(300));
        assertThat(calls).hasValue(1);
    }

    @Test
    void cancelRequestIsHonouredWhenTheAttemptFailsBeforeTheWorkerNoticesIt() throws Exception {
        CountDownLatch started = latch();
        CountDownLatch release = latch();
        AtomicInteger calls = new AtomicInteger();
        // Default lease 5 s: the next heartbeat is 1.7 s away, so the worker has not seen the request.
        DbTasks tasks = engine(b -> b.handler("long", Void.class, (ctx, p) -> {
            calls.incrementAndGet();
            started.countDown();
            awaitLatch(release);
            throw new IllegalStateException("failed on its own");
        }));
        long id = tasks.enqueue(TaskRequest.builder("long")
                        .maxAttempts(3)
                        .retryPolicy(RetryPolicy.fixed(Duration.ZERO))
                        .build())
                .task()
                .id();
        tasks.start();
        awaitLatch(started);

        assertThat(tasks.cancel(id).cancelRequested()).isTrue();
        release.countDown();

        Task cancelled = awaitStatus(tasks, id, TaskStatus.CANCELLED);
        assertThat(cancelled.finishedAt()).isNotNull();
        assertThat(cancelled.cancelRequested()).isFalse();
        assertThat(tasks.attempts(id)).singleElement().satisfies(a -> {
            assertThat(a.errorMessage()).isEqualTo("failed on its own");
        });
        assertStaysIn(tasks, id, TaskStatus.CANCELLED, Duration.ofMillis(300));
        assertThat(calls).hasValue(1);
    }

    @Test
    void cancelRequestedForATaskWhoseWorkerDiedEndsCancelledWhenRescued() throws Exception {
        CountDownLatch started = latch();
        CountDownLatch hung = latch(); // opened after the test
        AtomicInteger rescuerRuns = new AtomicInteger();
        DbTasks dying = engine(b -> b.workerId("dying")
                .lease(Duration.ofSeconds(60))
                .rescueInterval(Duration.ofMinutes(10))
                .handler(KIND, Void.class, (ctx, p) -> {
                    started.countDown();
                    awaitLatch(hung);
                }));
        DbTasks rescuer = engine(b -> b.workerId("rescuer").handler(KIND, Void.class, (ctx, p) -> {
            rescuerRuns.incrementAndGet();
        }));
        long id = dying.enqueue(TaskRequest.builder(KIND).maxAttempts(3).build())
                .task()
                .id();
        dying.start();
        awaitLatch(started);
        assertThat(dying.cancel(id).cancelRequested()).isTrue();
        expireLease(id); // the worker died before its next heartbeat could see the request

        rescuer.start();

        Task cancelled = awaitStatus(rescuer, id, TaskStatus.CANCELLED);
        assertThat(cancelled.finishedAt()).isNotNull();
        assertThat(rescuer.attempts(id)).extracting(Attempt::outcome).containsExactly(AttemptOutcome.LEASE_EXPIRED);
        assertStaysIn(rescuer, id, TaskStatus.CANCELLED, Duration.ofMillis(300));
        assertThat(rescuerRuns).hasValue(0);
    }

    @Test
    void cancelOfAFinishedTaskIsRefused() {
        broken.set(true);
        DbTasks tasks = worker();
        long failed = tasks.enqueue(TaskRequest.builder(KIND).maxAttempts(1).build())
                .task()
                .id();
        tasks.start();
        awaitStatus(tasks, failed, TaskStatus.FAILED);
        broken.set(false);
        long succeeded = tasks.enqueue(TaskRequest.of(KIND, null)).task().id();
        awaitStatus(tasks, succeeded, TaskStatus.SUCCEEDED);
        long cancelled = tasks.enqueue(
                        TaskRequest.builder(KIND).runAfter(Duration.ofHours(1)).build())
                .task()
                .id();
        tasks.cancel(cancelled);

        assertRefused(() -> tasks.cancel(failed), TaskStatus.FAILED);
        assertRefused(() -> tasks.cancel(succeeded), TaskStatus.SUCCEEDED);
        assertRefused(() -> tasks.cancel(cancelled), TaskStatus.CANCELLED);
        assertThat(tasks.find(succeeded).orElseThrow().status()).isEqualTo(TaskStatus.SUCCEEDED);
    }

    // --- reschedule ---

    @Test
    void rescheduleMovesAPendingTasksDueTimeAndItDoesNotRunBefore() {
        DbTasks tasks = worker();
        long id = tasks.enqueue(
                        TaskRequest.builder(KIND).runAfter(Duration.ofHours(1)).build())
                .task()
                .id();
        tasks.start();
        Instant later = Instant.now().plusSeconds(7200).truncatedTo(ChronoUnit.MICROS);
        assertThat(tasks.reschedule(id, later).runAt()).isEqualTo(later);
        Instant soon = Instant.now().plusMillis(600).truncatedTo(ChronoUnit.MICROS);

        Task moved = tasks.reschedule(id, soon);

        assertThat(moved.runAt()).isEqualTo(soon);
        assertThat(moved.status()).isEqualTo(TaskStatus.PENDING);
        Task done = awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
        assertThat(done.runAt()).isEqualTo(soon);
        assertThat(tasks.attempts(id))
                .singleElement()
                .satisfies(a -> assertThat(a.startedAt()).isAfterOrEqualTo(soon));
    }

    @Test
    void rescheduleIsRefusedUnlessPending() {
        DbTasks tasks = worker();
        long id = tasks.enqueue(TaskRequest.of(KIND, null)).task().id();
        tasks.start();
        Task done = awaitStatus(tasks, id, TaskStatus.SUCCEEDED);

        assertRefused(() -> tasks.reschedule(id, Instant.now().plusSeconds(60)), TaskStatus.SUCCEEDED);
        assertThat(tasks.find(id)).contains(done);
    }

    // --- run now ---

    @Test
    void runNowMakesAFuturePendingTaskRunAtOnce() {
        DbTasks tasks = worker();
        String key = "invoice:2026-11:4711";
        long id = tasks.enqueue(TaskRequest.builder(KIND)
                        .idempotencyKey(key)
                        .runAfter(Duration.ofHours(6))
                        .build())
                .task()
                .id();
        tasks.start();

        Task due = tasks.runNow(key);

        assertThat(due.id()).isEqualTo(id);
        assertThat(due.runAt()).isBefore(Instant.now().plusSeconds(60));
        awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
        assertThat(runs).hasValue(1);
    }

    @Test
    void runNowReRunsAFailedTaskAndIsRefusedOnceItSucceeded() {
        broken.set(true);
        DbTasks tasks = worker();
        String key = "invoice:2026-11:4712";
        long id = tasks.enqueue(TaskRequest.builder(KIND)
                        .idempotencyKey(key)
                        .maxAttempts(1)
                        .build())
                .task()
                .id();
        tasks.start();
        awaitStatus(tasks, id, TaskStatus.FAILED);
        broken.set(false);

        tasks.runNow(key);

        Task done = awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
        assertThat(done.attempt()).isEqualTo(2);
        assertThat(done.maxAttempts()).isEqualTo(2);
        assertThat(done.lastError()).isNull();
        List<Attempt> attempts = tasks.attempts(id);
        assertThat(attempts)
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.FAILED, AttemptOutcome.SUCCEEDED);
        assertRefused(() -> tasks.runNow(key), TaskStatus.SUCCEEDED);
    }

    @Test
    void runNowByIdMakesAPendingTaskDueAndRetriesAFailedOrCancelledOne() {
        DbTasks tasks = producer();
        long pending = tasks.enqueue(
                        TaskRequest.builder(KIND).runAfter(Duration.ofHours(6)).build())
                .task()
                .id();
        long failed = tasks.enqueue(TaskRequest.builder(KIND).maxAttempts(1).build())
                .task()
                .id();
        long cancelled = tasks.enqueue(TaskRequest.builder(KIND)
                        .maxAttempts(3)
                        .runAfter(Duration.ofHours(6))
                        .build())
                .task()
                .id();
        sql(
                "UPDATE dbtasks_task SET status = 'FAILED', attempt = 1, last_error = 'refused', finished_at = run_at"
                        + " WHERE id = ?",
                failed);
        tasks.cancel(cancelled);
        Instant soon = Instant.now().plusSeconds(60);

        Task due = tasks.runNow(pending);
        Task retried = tasks.runNow(failed);
        Task revived = tasks.runNow(cancelled);

        assertThat(due.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(due.runAt()).isBefore(soon);
        assertThat(due.maxAttempts())
                .isEqualTo(tasks.find(pending).orElseThrow().maxAttempts());
        assertThat(retried.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(retried.runAt()).isBefore(soon);
        assertThat(retried.attempt()).isEqualTo(1);
        assertThat(retried.maxAttempts()).isEqualTo(2);
        assertThat(retried.finishedAt()).isNull();
        assertThat(revived.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(revived.runAt()).isBefore(soon);
        assertThat(revived.maxAttempts()).isEqualTo(3);
        assertThat(revived.finishedAt()).isNull();
    }

    @Test
    void runNowByIdIsRefusedForRunningAndSucceededTasksAndForAMissingOne() {
        DbTasks tasks = producer();
        long running = tasks.enqueue(TaskRequest.builder(KIND).build()).task().id();
        long succeeded = tasks.enqueue(TaskRequest.builder(KIND).build()).task().id();
        sql(
                "UPDATE dbtasks_task SET status = 'RUNNING', attempt = 1, lease_owner = 'elsewhere', lease_token = 1"
                        + " WHERE id = ?",
                running);
        sql("UPDATE dbtasks_task SET status = 'SUCCEEDED', attempt = 1, finished_at = run_at WHERE id = ?", succeeded);

        assertRefused(() -> tasks.runNow(running), TaskStatus.RUNNING);
        assertRefused(() -> tasks.runNow(succeeded), TaskStatus.SUCCEEDED);
        assertThatThrownBy(() -> tasks.runNow(MISSING_ID)).isInstanceOf(TaskNotFoundException.class);
        assertThat(tasks.find(running).orElseThrow().leaseOwner()).isEqualTo("elsewhere");
        assertThat(tasks.find(succeeded).orElseThrow().status()).isEqualTo(TaskStatus.SUCCEEDED);
    }

    @Test
    void concurrentRunNowCallsOnAFailedTaskAllSucceedAndGrantOneAttempt() throws Exception {
        DbTasks tasks = producer();
        long id = tasks.enqueue(TaskRequest.builder(KIND).maxAttempts(1).build())
                .task()
                .id();
        sql("UPDATE dbtasks_task SET status = 'FAILED', attempt = 1, finished_at = run_at WHERE id = ?", id);
        int callers = 6;
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(callers);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(callers);
        try {
            List<java.util.concurrent.Future<Task>> calls = new java.util.ArrayList<>();
            for (int i = 0; i < callers; i++) {
                calls.add(pool.submit(() -> {
                    start.await();
                    return tasks.runNow(id);
                }));
            }
            for (java.util.concurrent.Future<Task> call : calls) {
                // A check-then-act would refuse the late callers: they saw FAILED, then found PENDING.
                assertThat(call.get(30, java.util.concurrent.TimeUnit.SECONDS).status())
                        .isEqualTo(TaskStatus.PENDING);
            }
        } finally {
            pool.shutdownNow();
        }
        Task after = tasks.find(id).orElseThrow();
        assertThat(after.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(after.maxAttempts()).isEqualTo(2);
    }
}
