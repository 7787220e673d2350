package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.event.TaskEvent;
import io.dbtasks.event.TaskEvent.Type;
import io.dbtasks.event.WorkerEvent;
import io.dbtasks.testing.EventRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The listener contract: what the engine publishes, per task in transition order, and that
 * listeners cannot hurt the engine or each other. Run once per database by the subclasses.
 */
public abstract class EventsContract extends EngineHarness {
    static final String KIND = "events.work";
    static final String STUCK = "events.stuck";
    static final String CANCEL = "events.cancel";
    static final int TASKS = 1000;

    /** Every tenth task fails its first attempt and is retried at once. */
    private static boolean failsOnce(int i) {
        return i % 10 == 0;
    }

    @Test
    void thousandTasksWithRetriesARescueAndACancelPublishExactlyTheirTransitionsInOrder() throws Exception {
        EventRecorder events = new EventRecorder();
        EventRecorder oldEvents = new EventRecorder();
        CountDownLatch stuckStarted = latch();
        CountDownLatch releaseStuck = latch();
        CountDownLatch cancelStarted = latch();
        DbTasks old = engine(b -> b.workerId("old-owner")
                .listener(oldEvents)
                .queue("stuck", 1)
                .lease(Duration.ofSeconds(60))
                .rescueInterval(Duration.ofMinutes(10))
                .handler(STUCK, Void.class, (ctx, p) -> {
                    stuckStarted.countDown();
                    awaitLatch(releaseStuck);
                }));
        DbTasks main = engine(b -> b.workerId("main")
                .listener(events)
                .queue(DbTasks.DEFAULT_QUEUE, 8)
                .queue("stuck", 1)
                .claimAhead(false) // no hand-backs of tasks claimed ahead: the expected events are exact
                .heartbeatInterval(Duration.ofMillis(200))
                .defaultRetryPolicy(RetryPolicy.fixed(Duration.ZERO))
                .handler(KIND, Integer.class, (ctx, i) -> {
                    if (failsOnce(i) && ctx.attempt() == 1) {
                        throw new IllegalStateException("first attempt of " + i + " fails");
                    }
                })
                .handler(STUCK, Void.class, (ctx, p) -> {})
                .handler(CANCEL, Void.class, (ctx, p) -> {
                    cancelStarted.countDown();
                    while (!ctx.isCancellationRequested()) {
                        Thread.sleep(10);
                    }
                    throw new InterruptedException("cancelled");
                }));

        long stuck = main.enqueue(
                        TaskRequest.builder(STUCK).queue("stuck").maxAttempts(3).build())
                .task()
                .id();
        long cancel = main.enqueue(TaskRequest.builder(CANCEL).build()).task().id();
        List<TaskRequest> batch = new ArrayList<>();
        for (int i = 0; i < TASKS; i++) {
            batch.add(TaskRequest.builder(KIND)
                    .payload(i)
                    .reference("i-" + i)
                    .maxAttempts(2)
                    .build());
        }
        List<Long> ids = main.enqueueAll(batch).stream().map(r -> r.task().id()).toList();

        // The rescue: "old-owner" claims the stuck task and pauses; its lease ends; main rescues it.
        old.start();
        awaitLatch(stuckStarted);
        long oldToken = old.find(stuck).orElseThrow().fencingToken();
        expireLease(stuck);
        main.start();
        awaitLatch(cancelStarted);
        main.cancel(cancel);

        for (long id : ids) {
            awaitStatus(main, id, TaskStatus.SUCCEEDED);
        }
        awaitStatus(main, stuck, TaskStatus.SUCCEEDED);
        awaitStatus(main, cancel, TaskStatus.CANCELLED);
        releaseStuck.countDown();
        eventually().until(() -> oldEvents.has(Type.LEASE_LOST, stuck, oldToken));

        List<Type> once = List.of(Type.ENQUEUED, Type.CLAIMED, Type.STARTED, Type.SUCCEEDED);
        List<Type> twice = List.of(
                Type.ENQUEUED,
                Type.CLAIMED,
                Type.STARTED,
                Type.RETRY_SCHEDULED,
                Type.CLAIMED,
                Type.STARTED,
                Type.SUCCEEDED);
        eventually()
                .alias("all events delivered")
                .until(() ->
                        events.count() == TASKS * once.size() + (TASKS / 10) * (twice.size() - once.size()) + 5 + 4);
        for (int i = 0; i < TASKS; i++) {
            long id = ids.get(i);
            List<TaskEvent> got = events.of(id);
            assertThat(got).extracting(TaskEvent::type).as("task %d", i).isEqualTo(failsOnce(i) ? twice : once);
            assertThat(got).allSatisfy(e -> {
                assertThat(e.taskId()).isEqualTo(id);
                assertThat(e.kind()).isEqualTo(KIND);
                assertThat(e.queue()).isEqualTo(DbTasks.DEFAULT_QUEUE);
                assertThat(e.workerId()).isEqualTo("main");
            });
            assertAttemptsAndTokens(got);
        }
        TaskEvent retry = events.of(ids.get(0)).get(3);
        assertThat(retry.nextRunAt()).isNotNull().isAfterOrEqualTo(retry.at());
        assertThat(retry.detail()).contains("first attempt of 0 fails");

        // The rescued task: main rescued the old token, then claimed, ran and completed it under a new one.
        assertThat(events.types(stuck, "main"))
                .containsExactly(Type.ENQUEUED, Type.RESCUED, Type.CLAIMED, Type.STARTED, Type.SUCCEEDED);
        TaskEvent rescued = events.of(stuck).get(1);
        assertThat(rescued.fencingToken()).isEqualTo(oldToken);
        assertThat(rescued.attempt()).isEqualTo(1);
        assertThat(rescued.detail()).contains("old-owner", "expired");
        assertThat(events.of(stuck).get(2).fencingToken()).isGreaterThan(oldToken);
        assertThat(oldEvents.types(stuck, "old-owner")).containsExactly(Type.CLAIMED, Type.STARTED, Type.LEASE_LOST);

        assertThat(events.types(cancel, "main"))
                .containsExactly(Type.ENQUEUED, Type.CLAIMED, Type.STARTED, Type.CANCELLED);
        assertAttemptsAndTokens(events.of(cancel).subList(1, 4));
        assertThat(events.workerEvents()).extracting(WorkerEvent::type).containsExactly(WorkerEvent.Type.STARTED);
        assertThat(main.droppedEvents()).isZero();
    }

    /** From each CLAIMED on, the events of one attempt carry its number and token; tokens grow. */
    private static void assertAttemptsAndTokens(List<TaskEvent> events) {
        int attempt = 0;
        long token = Long.MIN_VALUE;
        for (TaskEvent e : events) {
            if (e.type() == Type.ENQUEUED) {
                assertThat(e.fencingToken()).isNull();
                assertThat(e.attempt()).isZero();
                continue;
            }
            if (e.type() == Type.CLAIMED) {
                attempt++;
                assertThat(e.fencingToken()).isGreaterThan(token);
                token = e.fencingToken();
            }
            assertThat(e.attempt()).isEqualTo(attempt);
            assertThat(e.fencingToken()).isEqualTo(token);
        }
    }

    @Test
    void throwingAndSleepingListenersLoseNoEventsOfOthersAndStopNoTask() {
        EventRecorder events = new EventRecorder();
        AtomicInteger thrown = new AtomicInteger();
        AtomicInteger slept = new AtomicInteger();
        DbTasks tasks = engine(b -> b.listener(e -> {
                    thrown.incrementAndGet();
                    throw new IllegalStateException("a listener that always throws");
                })
                .listener(e -> {
                    slept.incrementAndGet();
                    try {
                        Thread.sleep(1_000);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                    }
                })
                .listener(events)
                .queue(DbTasks.DEFAULT_QUEUE, 8)
                .handler(KIND, Integer.class, (ctx, i) -> {}));
        List<TaskRequest> batch = new ArrayList<>();
        for (int i = 0; i < TASKS; i++) {
            batch.add(TaskRequest.builder(KIND).payload(i).build());
        }
        List<Long> ids =
                tasks.enqueueAll(batch).stream().map(r -> r.task().id()).toList();

        tasks.start();

        // Well within the patience, although the sleeping listener has taken only a few events.
        eventually()
                .alias("all tasks SUCCEEDED")
                .until(() -> tasks.stats().tasks().get(TaskStatus.SUCCEEDED) == TASKS);
        eventually().alias("the recorder's events").until(() -> events.count() >= TASKS * 4);
        for (long id : ids) {
            assertThat(events.of(id))
                    .extracting(TaskEvent::type)
                    .containsSubsequence(Type.ENQUEUED, Type.CLAIMED, Type.STARTED, Type.SUCCEEDED);
            assertThat(events.of(id))
                    .extracting(TaskEvent::type)
                    .endsWith(Type.SUCCEEDED)
                    .contains(Type.ENQUEUED);
        }
        assertThat(thrown.get()).isGreaterThanOrEqualTo(TASKS * 4);
        assertThat(slept.get()).isLessThan(TASKS);
    }

    @Test
    void longRunningTaskIsReportedOnceAndShutdownHandsItBack() throws Exception {
        EventRecorder events = new EventRecorder();
        CountDownLatch started = latch();
        CountDownLatch never = latch();
        DbTasks tasks = engine(b -> b.workerId("slow")
                .listener(events)
                .longRunningThreshold(Duration.ofMillis(100))
                .queue(DbTasks.DEFAULT_QUEUE, 1)
                .handler(KIND, Integer.class, (ctx, i) -> {
                    started.countDown();
                    never.await(); // until the shutdown interrupts it
                }));
        long id = tasks.enqueue(TaskRequest.builder(KIND).payload(1).build())
                .task()
                .id();
        tasks.start();
        awaitLatch(started);
        eventually().until(() -> events.types(id, "slow").contains(Type.LONG_RUNNING));
        Thread.sleep(300); // several more checks: still one event

        assertThat(tasks.stop(Duration.ofMillis(100))).isFalse(); // it had to be handed back

        assertThat(tasks.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        assertThat(events.types(id, "slow"))
                .containsExactly(Type.ENQUEUED, Type.CLAIMED, Type.STARTED, Type.LONG_RUNNING, Type.HANDED_BACK);
        assertThat(events.of(id).get(3).detail()).startsWith("running for ");
        assertThat(events.workerEvents())
                .extracting(WorkerEvent::type)
                .containsExactly(WorkerEvent.Type.STARTED, WorkerEvent.Type.STOPPED);
    }
}
