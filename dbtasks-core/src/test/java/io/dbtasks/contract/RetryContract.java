package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.Attempt;
import io.dbtasks.AttemptOutcome;
import io.dbtasks.DbTasks;
import io.dbtasks.NonRetryableException;
import io.dbtasks.RetryPolicy;
import io.dbtasks.Task;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Retries with backoff computed on the database clock, exhaustion, non-retryable errors and
 * per-attempt timeouts. Run once per database by the subclasses.
 */
public abstract class RetryContract extends EngineHarness {
    static final String FAILING = "always.fails";
    /** Database timestamps of one retry are written by two statements of one transaction. */
    static final Duration TOLERANCE = Duration.ofMillis(500);

    private DbTasks failingEngine(java.util.function.Consumer<DbTasks.Builder> more) {
        return engine(b -> {
            b.handler(FAILING, Void.class, (ctx, p) -> {
                throw new IllegalStateException("boom on attempt " + ctx.attempt());
            });
            more.accept(b);
        });
    }

    /** Waits until the task has {@code n} attempts and is PENDING again, waiting out its backoff. */
    private static Task awaitRetryScheduled(DbTasks tasks, long id, int n) {
        eventually()
                .alias("attempt " + n + " of task " + id + " to fail and be rescheduled")
                .until(() -> tasks.attempts(id).size() == n
                        && tasks.find(id).orElseThrow().status() == TaskStatus.PENDING);
        return tasks.find(id).orElseThrow();
    }

    /** The gap between the last attempt's end and the next due time, both written by the database. */
    private static Duration scheduledDelay(DbTasks tasks, Task task) {
        List<Attempt> attempts = tasks.attempts(task.id());
        return Duration.between(attempts.get(attempts.size() - 1).finishedAt(), task.runAt());
    }

    @Test
    void aShortBackoffIsNotStretchedToThePollInterval() {
        DbTasks tasks =
                engine(b -> b.pollInterval(Duration.ofMinutes(5)).handler("fails.once", Void.class, (ctx, p) -> {
                    if (ctx.attempt() == 1) {
                        throw new IllegalStateException("first attempt fails");
                    }
                }));
        tasks.start();
        long none = tasks.enqueue(TaskRequest.builder("fails.once")
                        .retryPolicy(RetryPolicy.fixed(Duration.ZERO))
                        .build())
                .task()
                .id();
        long shortOne = tasks.enqueue(TaskRequest.builder("fails.once")
                        .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(300)))
                        .build())
                .task()
                .id();
        // The claim loop found the queue drained and sleeps for its 5-minute poll: only the wake-ups
        // at the retries' due times can start them within the wait below.
        eventually()
                .atMost(Duration.ofSeconds(20))
                .alias("both tasks to succeed on their second attempt, long before the 5-minute poll")
                .until(() -> tasks.find(none).orElseThrow().status() == TaskStatus.SUCCEEDED
                        && tasks.find(shortOne).orElseThrow().status() == TaskStatus.SUCCEEDED);
        assertThat(tasks.attempts(none))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.FAILED, AttemptOutcome.SUCCEEDED);
        assertThat(tasks.attempts(shortOne))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.FAILED, AttemptOutcome.SUCCEEDED);
    }

    @Test
    void fixedBackoffSchedulesTheNextAttemptFromTheDatabaseClock() {
        DbTasks tasks = failingEngine(b -> {});
        String key = "fixed:" + database();
        long id = tasks.enqueue(TaskRequest.builder(FAILING)
                        .idempotencyKey(key)
                        .maxAttempts(3)
                        .retryPolicy(RetryPolicy.fixed(Duration.ofHours(1)))
                        .build())
                .task()
                .id();
        tasks.start();

        Task first = awaitRetryScheduled(tasks, id, 1);
        assertThat(scheduledDelay(tasks, first)).isCloseTo(Duration.ofHours(1), TOLERANCE);
        assertThat(first.lastError()).isEqualTo("java.lang.IllegalStateException: boom on attempt 1");

        tasks.runNow(key); // an operator skips the wait
        Task second = awaitRetryScheduled(tasks, id, 2);
        assertThat(scheduledDelay(tasks, second)).isCloseTo(Duration.ofHours(1), TOLERANCE);
    }

    @Test
    void exponentialBackoffGrowsByTheMultiplierUpToTheCap() {
        DbTasks tasks = failingEngine(b -> {});
        String key = "exponential:" + database();
        long id = tasks.enqueue(TaskRequest.builder(FAILING)
                        .idempotencyKey(key)
                        .maxAttempts(5)
                        .retryPolicy(RetryPolicy.exponential(Duration.ofHours(1), 2.0, Duration.ofHours(3), 0.0))
                        .build())
                .task()
                .id();
        tasks.start();

        Duration[] expected = {Duration.ofHours(1), Duration.ofHours(2), Duration.ofHours(3), Duration.ofHours(3)};
        for (int n = 1; n <= expected.length; n++) {
            Task t = awaitRetryScheduled(tasks, id, n);
            assertThat(scheduledDelay(tasks, t)).as("wait after attempt %d", n).isCloseTo(expected[n - 1], TOLERANCE);
            tasks.runNow(key); // an operator skips the wait, so the next attempt happens now
        }
        Task failed = awaitStatus(tasks, id, TaskStatus.FAILED);
        assertThat(failed.attempt()).isEqualTo(5);
    }

    @Test
    void jitterShortensTheWaitByTheDrawnFraction() {
        // random() = 0.5 with jitter 0.5 takes a quarter off each wait: 1 h -> 45 min, 2 h -> 90 min.
        DbTasks tasks = failingEngine(b -> b.random(() -> 0.5));
        String key = "jitter:" + database();
        long id = tasks.enqueue(TaskRequest.builder(FAILING)
                        .idempotencyKey(key)
                        .maxAttempts(3)
                        .retryPolicy(RetryPolicy.exponential(Duration.ofHours(1), 2.0, Duration.ofHours(10), 0.5))
                        .build())
                .task()
                .id();
        tasks.start();

        Task first = awaitRetryScheduled(tasks, id, 1);
        assertThat(scheduledDelay(tasks, first)).isCloseTo(Duration.ofMinutes(45), TOLERANCE);
        tasks.runNow(key);
        Task second = awaitRetryScheduled(tasks, id, 2);
        assertThat(scheduledDelay(tasks, second)).isCloseTo(Duration.ofMinutes(90), TOLERANCE);
    }

    @Test
    void engineDefaultRetryPolicyAndAttemptsApplyWhenTheRequestSaysNothing() {
        DbTasks tasks = failingEngine(b ->
                b.defaultRetryPolicy(RetryPolicy.fixed(Duration.ofMinutes(7))).defaultMaxAttempts(2));
        long id = tasks.enqueue(TaskRequest.of(FAILING, null)).task().id();
        assertThat(tasks.find(id).orElseThrow().maxAttempts()).isEqualTo(2);
        tasks.start();

        Task first = awaitRetryScheduled(tasks, id, 1);
        assertThat(scheduledDelay(tasks, first)).isCloseTo(Duration.ofMinutes(7), TOLERANCE);
    }

    @Test
    void retryDoesNotRunBeforeItsBackoffHasPassed() {
        AtomicInteger calls = new AtomicInteger();
        DbTasks tasks = engine(b -> b.handler(FAILING, Void.class, (ctx, p) -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("first attempt fails");
            }
        }));
        long id = tasks.enqueue(TaskRequest.builder(FAILING)
                        .maxAttempts(2)
                        .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(400)))
                        .build())
                .task()
                .id();
        tasks.start();

        awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
        List<Attempt> attempts = tasks.attempts(id);
        assertThat(attempts)
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.FAILED, AttemptOutcome.SUCCEEDED);
        assertThat(Duration.between(
                        attempts.get(0).finishedAt(), attempts.get(1).startedAt()))
                .isGreaterThanOrEqualTo(Duration.ofMillis(400).minus(Duration.ofMillis(20)));
    }

    @Test
    void exhaustedTaskFailsWithOneFailedAttemptRowPerAttempt() {
        DbTasks tasks = failingEngine(b -> b.workerId("retrier"));
        long id = tasks.enqueue(TaskRequest.builder(FAILING)
                        .maxAttempts(3)
                        .retryPolicy(RetryPolicy.fixed(Duration.ZERO))
                        .build())
                .task()
                .id();
        tasks.start();

        Task failed = awaitStatus(tasks, id, TaskStatus.FAILED);

        assertThat(failed.attempt()).isEqualTo(3);
        assertThat(failed.finishedAt()).isNotNull();
        assertThat(failed.leaseExpiresAt()).isNull();
        assertThat(failed.leaseOwner()).isNull();
        assertThat(failed.lastError()).isEqualTo("java.lang.IllegalStateException: boom on attempt 3");
        List<Attempt> attempts = tasks.attempts(id);
        assertThat(attempts).hasSize(3);
        for (int i = 0; i < 3; i++) {
            Attempt a = attempts.get(i);
            assertThat(a.taskId()).isEqualTo(id);
            assertThat(a.attempt()).isEqualTo(i + 1);
            assertThat(a.outcome()).isEqualTo(AttemptOutcome.FAILED);
            assertThat(a.worker()).isEqualTo("retrier");
            assertThat(a.errorClass()).isEqualTo(IllegalStateException.class.getName());
            assertThat(a.errorMessage()).isEqualTo("boom on attempt " + (i + 1));
            assertThat(a.stackTrace())
                    .startsWith("java.lang.IllegalStateException: boom on attempt " + (i + 1))
                    .contains("\tat ");
            assertThat(a.startedAt()).isNotNull();
            assertThat(a.finishedAt()).isAfterOrEqualTo(a.startedAt());
            assertThat(a.duration().isNegative()).isFalse();
        }
        assertThat(attempts).extracting(Attempt::fencingToken).isSorted().doesNotHaveDuplicates();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE task_id = ? AND outcome = 'FAILED'", id))
                .isEqualTo(3);
    }

    @Test
    void nonRetryableExceptionFailsTheTaskAtOnce() {
        DbTasks tasks = engine(b -> b.handler(FAILING, Void.class, (ctx, p) -> {
            throw new NonRetryableException("order 17 does not exist");
        }));
        long id = tasks.enqueue(TaskRequest.builder(FAILING).maxAttempts(5).build())
                .task()
                .id();
        tasks.start();

        Task failed = awaitStatus(tasks, id, TaskStatus.FAILED);

        assertThat(failed.attempt()).isEqualTo(1);
        assertThat(failed.lastError()).isEqualTo(NonRetryableException.class.getName() + ": order 17 does not exist");
        assertThat(tasks.attempts(id)).singleElement().satisfies(a -> {
            assertThat(a.outcome()).isEqualTo(AttemptOutcome.FAILED);
            assertThat(a.errorClass()).isEqualTo(NonRetryableException.class.getName());
        });
    }

    @Test
    void registeredNonRetryableTypesAndTheirSubclassesFailAtOnceOthersAreRetried() {
        DbTasks tasks = engine(b -> b.nonRetryable(IllegalArgumentException.class)
                .handler("bad.number", Void.class, (ctx, p) -> {
                    throw new NumberFormatException("not a number: x17"); // a subclass of the registered type
                })
                .handler("flaky", Void.class, (ctx, p) -> {
                    throw new IllegalStateException("try again");
                }));
        RetryPolicy now = RetryPolicy.fixed(Duration.ZERO);
        long bad = tasks.enqueue(TaskRequest.builder("bad.number")
                        .maxAttempts(4)
                        .retryPolicy(now)
                        .build())
                .task()
                .id();
        long flaky = tasks.enqueue(TaskRequest.builder("flaky")
                        .maxAttempts(2)
                        .retryPolicy(now)
                        .build())
                .task()
                .id();
        tasks.start();

        Task badFailed = awaitStatus(tasks, bad, TaskStatus.FAILED);
        Task flakyFailed = awaitStatus(tasks, flaky, TaskStatus.FAILED);

        assertThat(badFailed.attempt()).isEqualTo(1);
        assertThat(badFailed.lastError()).contains("NumberFormatException").contains("not a number: x17");
        assertThat(tasks.attempts(bad)).hasSize(1);
        assertThat(flakyFailed.attempt()).isEqualTo(2);
        assertThat(tasks.attempts(flaky)).hasSize(2);
    }

    @Test
    void handlerThatOutlivesItsTimeoutIsInterruptedAndRetried() throws Exception {
        CountDownLatch interrupted = latch();
        DbTasks tasks = engine(b -> b.handler("slow", Void.class, (ctx, p) -> {
            if (ctx.attempt() == 1) {
                try {
                    Thread.sleep(PATIENCE.toMillis());
                } catch (InterruptedException e) {
                    interrupted.countDown();
                    throw e;
                }
            }
        }));
        long id = tasks.enqueue(TaskRequest.builder("slow")
                        .timeout(Duration.ofMillis(300))
                        .maxAttempts(2)
                        .retryPolicy(RetryPolicy.fixed(Duration.ZERO))
                        .build())
                .task()
                .id();
        tasks.start();

        Task done = awaitStatus(tasks, id, TaskStatus.SUCCEEDED);

        awaitLatch(interrupted);
        assertThat(done.attempt()).isEqualTo(2);
        List<Attempt> attempts = tasks.attempts(id);
        assertThat(attempts)
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.TIMED_OUT, AttemptOutcome.SUCCEEDED);
        Attempt timedOut = attempts.get(0);
        assertThat(timedOut.errorClass()).isEqualTo(TimeoutException.class.getName());
        assertThat(timedOut.errorMessage()).contains("timeout of 300 ms");
        assertThat(timedOut.duration()).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(Duration.between(timedOut.startedAt(), timedOut.finishedAt()))
                .isGreaterThanOrEqualTo(Duration.ofMillis(300));
    }

    @Test
    void timeoutOnTheLastAttemptFailsTheTask() {
        DbTasks tasks = engine(b -> b.defaultTimeout(Duration.ofMillis(200))
                .handler("slow", Void.class, (ctx, p) -> Thread.sleep(PATIENCE.toMillis())));
        long id = tasks.enqueue(TaskRequest.builder("slow").maxAttempts(1).build())
                .task()
                .id();
        tasks.start();

        Task failed = awaitStatus(tasks, id, TaskStatus.FAILED);

        assertThat(failed.attempt()).isEqualTo(1);
        assertThat(failed.lastError())
                .contains(TimeoutException.class.getName())
                .contains("timeout of 200 ms");
        assertThat(tasks.attempts(id)).extracting(Attempt::outcome).containsExactly(AttemptOutcome.TIMED_OUT);
        eventually().until(() -> tasks.runningCount() == 0);
    }

    @Test
    void timedOutHandlerThatIgnoresInterruptsHasItsLateResultDiscarded() throws Exception {
        CountDownLatch started = latch();
        CountDownLatch release = latch();
        AtomicBoolean returned = new AtomicBoolean();
        DbTasks tasks = engine(b -> b.handler("stubborn", Void.class, (ctx, p) -> {
            started.countDown();
            while (release.getCount() > 0) {
                try {
                    release.await();
                } catch (InterruptedException ignored) {
                    // a badly behaved handler: keeps going
                }
            }
            returned.set(true);
        }));
        long id = tasks.enqueue(TaskRequest.builder("stubborn")
                        .timeout(Duration.ofMillis(200))
                        .maxAttempts(1)
                        .build())
                .task()
                .id();
        tasks.start();
        awaitLatch(started);
        Task failed = awaitStatus(tasks, id, TaskStatus.FAILED);

        release.countDown();
        eventually().until(() -> tasks.runningCount() == 0);

        assertThat(returned).isTrue();
        assertThat(tasks.find(id)).contains(failed);
        assertThat(tasks.attempts(id)).extracting(Attempt::outcome).containsExactly(AttemptOutcome.TIMED_OUT);
    }
}
