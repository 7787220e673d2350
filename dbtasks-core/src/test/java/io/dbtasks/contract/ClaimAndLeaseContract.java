package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.Attempt;
import io.dbtasks.AttemptOutcome;
import io.dbtasks.DbTasks;
import io.dbtasks.Page;
import io.dbtasks.Task;
import io.dbtasks.TaskFilter;
import io.dbtasks.TaskHandler;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.event.TaskEvent;
import io.dbtasks.lock.LeaseLostException;
import io.dbtasks.testing.EventRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Claims are exclusive, leases are fenced by their token, expired leases are rescued, and shutdown
 * hands unfinished work back. Run once per database by the subclasses.
 */
public abstract class ClaimAndLeaseContract extends EngineHarness {
    static final String KIND = "lease.work";
    /** What the old worker of a {@link #takeOver} published. */
    private final EventRecorder oldWorkerEvents = new EventRecorder();

    @Test
    void eachOfFiveHundredTasksRunsExactlyOnceAcrossFourEnginesUnderDistinctTokens() {
        int tasks = 500;
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        Map<Long, Long> tokenByTask = new ConcurrentHashMap<>();
        Set<Long> tokens = ConcurrentHashMap.newKeySet();
        AtomicInteger reusedTokens = new AtomicInteger();
        TaskHandler<Void> record = (ctx, p) -> {
            runs.computeIfAbsent(ctx.taskId(), id -> new AtomicInteger()).incrementAndGet();
            tokenByTask.put(ctx.taskId(), ctx.fencingToken());
            if (!tokens.add(ctx.fencingToken())) {
                reusedTokens.incrementAndGet();
            }
        };
        List<DbTasks> four = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String worker = "engine-" + i;
            four.add(engine(b -> b.workerId(worker)
                    .queue(DbTasks.DEFAULT_QUEUE, 4)
                    .claimBatch(4)
                    .handler(KIND, Void.class, record)));
        }
        List<TaskRequest> batch = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            batch.add(TaskRequest.builder(KIND).reference("t-" + i).build());
        }
        producer().enqueueAll(batch);

        four.forEach(DbTasks::start);

        DbTasks any = four.get(0);
        eventually()
                .alias("all " + tasks + " tasks SUCCEEDED")
                .until(() -> any.stats().tasks().get(TaskStatus.SUCCEEDED) == tasks);
        assertThat(runs).hasSize(tasks);
        assertThat(runs.values()).allSatisfy(n -> assertThat(n).hasValue(1));
        assertThat(tokens).hasSize(tasks);
        assertThat(reusedTokens).hasValue(0);
        // The database agrees: one SUCCEEDED attempt per task, under the token the handler saw.
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt")).isEqualTo(tasks);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE outcome = 'SUCCEEDED' AND attempt = 1"))
                .isEqualTo(tasks);
        assertThat(count("SELECT COUNT(DISTINCT lease_token) FROM dbtasks_attempt"))
                .isEqualTo(tasks);
        Page<Task> all = any.list(TaskFilter.ALL, 0, 1000);
        assertThat(all.total()).isEqualTo(tasks);
        assertThat(all.items()).allSatisfy(t -> {
            assertThat(t.status()).isEqualTo(TaskStatus.SUCCEEDED);
            assertThat(t.attempt()).isEqualTo(1);
            assertThat(t.fencingToken()).isEqualTo(tokenByTask.get(t.id()));
            assertThat(t.leaseOwner()).isNull();
        });
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE worker LIKE 'engine-%'"))
                .isEqualTo(tasks);
    }

    @Test
    void higherPriorityRunsFirstAndTasksNotYetDueWait() {
        List<String> order = new CopyOnWriteArrayList<>();
        DbTasks tasks = engine(b -> b.queue(DbTasks.DEFAULT_QUEUE, 1)
                .claimBatch(1)
                .handler(KIND, Void.class, (ctx, p) -> order.add(label(ctx.taskId()))));
        long low = tasks.enqueue(
                        TaskRequest.builder(KIND).name("low").priority(1).build())
                .task()
                .id();
        long high = tasks.enqueue(
                        TaskRequest.builder(KIND).name("high").priority(9).build())
                .task()
                .id();
        long future = tasks.enqueue(TaskRequest.builder(KIND)
                        .name("future")
                        .priority(100)
                        .runAfter(Duration.ofHours(1))
                        .build())
                .task()
                .id();

        tasks.start();

        awaitStatus(tasks, low, TaskStatus.SUCCEEDED);
        awaitStatus(tasks, high, TaskStatus.SUCCEEDED);
        assertThat(order).containsExactly(label(high), label(low));
        Task waiting = tasks.find(future).orElseThrow();
        assertThat(waiting.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(waiting.attempt()).isZero();
        assertThat(tasks.attempts(future)).isEmpty();
    }

    @Test
    void workerClaimsOnlyTheQueuesItWorksMatchedExactly() {
        AtomicInteger runs = new AtomicInteger();
        DbTasks tasks = engine(b -> b.queue("mail", 2).handler(KIND, Void.class, (ctx, p) -> runs.incrementAndGet()));
        long mail = tasks.enqueue(TaskRequest.builder(KIND).queue("mail").build())
                .task()
                .id();
        List<Long> others = new ArrayList<>();
        for (String queue : List.of("Mail", "MAIL", "mail ", "billing", DbTasks.DEFAULT_QUEUE)) {
            others.add(tasks.enqueue(TaskRequest.builder(KIND).queue(queue).build())
                    .task()
                    .id());
        }
        tasks.start();

        awaitStatus(tasks, mail, TaskStatus.SUCCEEDED);
        for (long id : others) {
            assertStaysIn(tasks, id, TaskStatus.PENDING, Duration.ofMillis(100));
        }
        assertThat(runs).hasValue(1);
        assertThat(tasks.stats().queues()).containsOnlyKeys("mail", "Mail", "MAIL", "mail ", "billing", "default");
        assertThat(tasks.list(new TaskFilter(null, "Mail", null), 0, 10).total())
                .isEqualTo(1);
    }

    private static String label(long id) {
        return "task " + id;
    }

    /** What a takeover left behind: the task's id, the old worker's token, and the new owner's final row. */
    record Takeover(DbTasks oldWorker, long id, long oldToken, Task settled) {}

    /**
     * Worker "old-owner" claims the task and blocks; its lease is made to end (as if it had paused);
     * engine "new-owner" rescues the task and runs it to SUCCEEDED. Then the old worker's handler
     * continues with {@code oldWorkerAfterTakeover}, and this returns once it has finished.
     *
     * <p>The old worker's heartbeat interval (20 s) is longer than the scenario, so its lease is lost
     * only by the takeover, never renewed; its single slot is busy, so it cannot re-claim the task.
     */
    private Takeover takeOver(TaskHandler<Void> oldWorkerAfterTakeover) throws Exception {
        CountDownLatch started = latch();
        CountDownLatch release = latch();
        DbTasks oldWorker = engine(b -> b.workerId("old-owner")
                .listener(oldWorkerEvents)
                .queue(DbTasks.DEFAULT_QUEUE, 1)
                .lease(Duration.ofSeconds(60))
                .rescueInterval(Duration.ofMinutes(10))
                .handler(KIND, Void.class, (ctx, p) -> {
                    started.countDown();
                    awaitLatch(release);
                    oldWorkerAfterTakeover.handle(ctx, p);
                }));
        DbTasks newOwner = engine(b -> b.workerId("new-owner").handler(KIND, Void.class, (ctx, p) -> {}));
        long id = oldWorker
                .enqueue(TaskRequest.builder(KIND).maxAttempts(3).build())
                .task()
                .id();
        oldWorker.start();
        awaitLatch(started);
        Task claimed = oldWorker.find(id).orElseThrow();
        assertThat(claimed.status()).isEqualTo(TaskStatus.RUNNING);
        assertThat(claimed.leaseOwner()).isEqualTo("old-owner");
        assertThat(claimed.attempt()).isEqualTo(1);

        expireLease(id);
        newOwner.start();

        Task settled = awaitStatus(newOwner, id, TaskStatus.SUCCEEDED);
        assertThat(settled.attempt()).isEqualTo(2);
        assertThat(settled.fencingToken()).isGreaterThan(claimed.fencingToken());
        assertThat(settled.leaseOwner()).isNull();
        List<Attempt> attempts = newOwner.attempts(id);
        assertThat(attempts)
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.LEASE_EXPIRED, AttemptOutcome.SUCCEEDED);
        Attempt expired = attempts.get(0);
        assertThat(expired.attempt()).isEqualTo(1);
        assertThat(expired.worker()).isEqualTo("old-owner");
        assertThat(expired.fencingToken()).isEqualTo(claimed.fencingToken());
        assertThat(expired.errorMessage()).contains("expired");
        Attempt rerun = attempts.get(1);
        assertThat(rerun.attempt()).isEqualTo(2);
        assertThat(rerun.worker()).isEqualTo("new-owner");
        assertThat(rerun.fencingToken()).isEqualTo(settled.fencingToken());

        release.countDown();
        eventually().alias("old worker's handler to finish").until(() -> oldWorker.runningCount() == 0);
        return new Takeover(oldWorker, id, claimed.fencingToken(), settled);
    }

    @Test
    void expiredLeaseIsTakenOverAndOldTokenCannotComplete() throws Exception {
        Takeover t = takeOver((ctx, p) -> {});

        // The old worker returned normally; its guarded completion matched 0 rows.
        assertThat(t.oldWorker().find(t.id())).contains(t.settled());
        assertThat(t.oldWorker().attempts(t.id())).hasSize(2);
        eventually().until(() -> oldWorkerEvents.has(TaskEvent.Type.LEASE_LOST, t.id(), t.oldToken()));
        // Either engine's rescue may move the expired lease (the old worker's first sweep runs at its
        // start, and on a loaded machine after the test expired the lease): RESCUED is not the old
        // worker's failure, and is left out; nothing else may follow its lost lease.
        assertThat(oldWorkerEvents.types(t.id(), "old-owner"))
                .filteredOn(type -> type != TaskEvent.Type.RESCUED)
                .containsExactly(
                        TaskEvent.Type.ENQUEUED,
                        TaskEvent.Type.CLAIMED,
                        TaskEvent.Type.STARTED,
                        TaskEvent.Type.LEASE_LOST);
    }

    @Test
    void oldWorkersFailureAfterTakeoverChangesNothing() throws Exception {
        Takeover t = takeOver((ctx, p) -> {
            throw new IllegalStateException("late failure of the old worker");
        });

        // No FAILED attempt, no retry: the row is exactly what the new owner wrote.
        assertThat(t.oldWorker().find(t.id())).contains(t.settled());
        assertThat(t.oldWorker().attempts(t.id()))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.LEASE_EXPIRED, AttemptOutcome.SUCCEEDED);
        eventually().until(() -> oldWorkerEvents.has(TaskEvent.Type.LEASE_LOST, t.id(), t.oldToken()));
        // Either engine's rescue may move the expired lease (the old worker's first sweep runs at its
        // start, and on a loaded machine after the test expired the lease): RESCUED is not the old
        // worker's failure, and is left out; nothing else may follow its lost lease.
        assertThat(oldWorkerEvents.types(t.id(), "old-owner"))
                .filteredOn(type -> type != TaskEvent.Type.RESCUED)
                .containsExactly(
                        TaskEvent.Type.ENQUEUED,
                        TaskEvent.Type.CLAIMED,
                        TaskEvent.Type.STARTED,
                        TaskEvent.Type.LEASE_LOST);
    }

    @Test
    void oldWorkersHeartbeatThrowsLeaseLostAfterTakeover() throws Exception {
        AtomicReference<Exception> heartbeat = new AtomicReference<>();
        AtomicBoolean lostBefore = new AtomicBoolean(true);
        AtomicBoolean lostAfter = new AtomicBoolean();
        Takeover t = takeOver((ctx, p) -> {
            lostBefore.set(ctx.isLeaseLost());
            try {
                ctx.heartbeat();
            } catch (RuntimeException e) {
                heartbeat.set(e);
            }
            lostAfter.set(ctx.isLeaseLost());
        });

        assertThat(heartbeat.get())
                .isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("Task " + t.id())
                .hasMessageContaining("token " + t.oldToken());
        assertThat(lostBefore).isFalse(); // nobody had told it yet
        assertThat(lostAfter).isTrue();
        assertThat(t.oldWorker().find(t.id())).contains(t.settled());
        eventually().until(() -> oldWorkerEvents.has(TaskEvent.Type.LEASE_LOST, t.id(), t.oldToken()));
    }

    @Test
    void heartbeatThatFindsTheLeaseTakenOverInterruptsTheHandler() throws Exception {
        CountDownLatch started = latch();
        CountDownLatch interrupted = latch();
        AtomicBoolean sawLeaseLost = new AtomicBoolean();
        // Lease 2 s, heartbeat 1.5 s: the takeover below happens well before the first heartbeat,
        // which then finds its token gone.
        DbTasks oldWorker = engine(b -> b.workerId("old-owner")
                .listener(oldWorkerEvents)
                .queue(DbTasks.DEFAULT_QUEUE, 1)
                .lease(Duration.ofSeconds(2))
                .heartbeatInterval(Duration.ofMillis(1500))
                .rescueInterval(Duration.ofMinutes(10))
                .handler(KIND, Void.class, (ctx, p) -> {
                    started.countDown();
                    try {
                        Thread.sleep(PATIENCE.toMillis());
                    } catch (InterruptedException e) {
                        sawLeaseLost.set(ctx.isLeaseLost());
                        interrupted.countDown();
                        throw e;
                    }
                }));
        DbTasks newOwner = engine(b -> b.workerId("new-owner").handler(KIND, Void.class, (ctx, p) -> {}));
        long id = oldWorker.enqueue(TaskRequest.of(KIND, null)).task().id();
        oldWorker.start();
        awaitLatch(started);
        expireLease(id);
        newOwner.start();
        Task settled = awaitStatus(newOwner, id, TaskStatus.SUCCEEDED);

        awaitLatch(interrupted);

        assertThat(sawLeaseLost).isTrue();
        eventually().until(() -> oldWorker.runningCount() == 0);
        assertThat(newOwner.find(id)).contains(settled);
        assertThat(newOwner.attempts(id))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.LEASE_EXPIRED, AttemptOutcome.SUCCEEDED);
    }

    @Test
    void heartbeatInterruptsTheExecutionThatLostItsLeaseNotTheOneOfTheSameTaskThatHoldsIt() throws Exception {
        // One engine runs two executions of each task: the first lost its lease and was rescued, and
        // the same engine re-claimed the task. Its next heartbeat must stop the first and only it.
        int n = 4;
        CountDownLatch firstStarted = latch(n);
        CountDownLatch secondStarted = latch(n);
        CountDownLatch releaseSecond = latch();
        Set<Long> firstInterrupted = ConcurrentHashMap.newKeySet();
        Set<Long> secondInterrupted = ConcurrentHashMap.newKeySet();
        DbTasks tasks = engine(b -> b.queue(DbTasks.DEFAULT_QUEUE, 2 * n)
                .lease(Duration.ofSeconds(60))
                .heartbeatInterval(Duration.ofMillis(1200))
                .rescueInterval(Duration.ofMillis(50))
                .handler(KIND, Void.class, (ctx, p) -> {
                    if (ctx.attempt() == 1) {
                        firstStarted.countDown();
                        try {
                            Thread.sleep(PATIENCE.toMillis());
                        } catch (InterruptedException e) {
                            firstInterrupted.add(ctx.taskId());
                            throw e;
                        }
                    } else {
                        secondStarted.countDown();
                        try {
                            awaitLatch(releaseSecond);
                        } catch (InterruptedException e) {
                            secondInterrupted.add(ctx.taskId());
                            throw e;
                        }
                    }
                }));
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(tasks.enqueue(TaskRequest.of(KIND, null)).task().id());
        }
        tasks.start();
        awaitLatch(firstStarted);
        ids.forEach(this::expireLease); // long before the first heartbeat at 1.2 s

        awaitLatch(secondStarted);
        eventually()
                .atMost(Duration.ofSeconds(5))
                .alias("the stale first executions to be interrupted by the heartbeat")
                .until(() -> firstInterrupted.size() == n);

        assertThat(secondInterrupted).isEmpty();
        releaseSecond.countDown();
        for (long id : ids) {
            Task done = awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
            assertThat(done.attempt()).isEqualTo(2);
            assertThat(tasks.attempts(id))
                    .extracting(Attempt::outcome)
                    .containsExactly(AttemptOutcome.LEASE_EXPIRED, AttemptOutcome.SUCCEEDED);
        }
        assertThat(secondInterrupted).isEmpty();
    }

    @Test
    void expiredLeaseOnTheLastAttemptIsRescuedToFailed() throws Exception {
        CountDownLatch started = latch();
        CountDownLatch release = latch();
        AtomicInteger rescuerRuns = new AtomicInteger();
        DbTasks oldWorker = engine(b -> b.workerId("old-owner")
                .listener(oldWorkerEvents)
                .queue(DbTasks.DEFAULT_QUEUE, 1)
                .lease(Duration.ofSeconds(60))
                .rescueInterval(Duration.ofMinutes(10))
                .handler(KIND, Void.class, (ctx, p) -> {
                    started.countDown();
                    awaitLatch(release);
                }));
        DbTasks rescuer =
                engine(b -> b.workerId("rescuer").handler(KIND, Void.class, (ctx, p) -> rescuerRuns.incrementAndGet()));
        long id = oldWorker
                .enqueue(TaskRequest.builder(KIND).maxAttempts(1).build())
                .task()
                .id();
        oldWorker.start();
        awaitLatch(started);
        long oldToken = oldWorker.find(id).orElseThrow().fencingToken();
        expireLease(id);
        rescuer.start();

        Task failed = awaitStatus(rescuer, id, TaskStatus.FAILED);

        assertThat(failed.attempt()).isEqualTo(1);
        assertThat(failed.finishedAt()).isNotNull();
        assertThat(failed.leaseExpiresAt()).isNull();
        assertThat(failed.leaseOwner()).isNull();
        assertThat(failed.lastError()).contains("old-owner").contains("expired").contains("no attempts left");
        List<Attempt> attempts = rescuer.attempts(id);
        assertThat(attempts).hasSize(1);
        assertThat(attempts.get(0).outcome()).isEqualTo(AttemptOutcome.LEASE_EXPIRED);
        assertThat(attempts.get(0).fencingToken()).isEqualTo(oldToken);
        assertThat(attempts.get(0).worker()).isEqualTo("old-owner");
        assertThat(attempts.get(0).finishedAt())
                .isAfterOrEqualTo(attempts.get(0).startedAt());

        // The old worker finishing late changes nothing, and nobody runs the task again.
        release.countDown();
        eventually().until(() -> oldWorker.runningCount() == 0);
        assertThat(rescuer.find(id)).contains(failed);
        assertThat(rescuerRuns).hasValue(0);
    }

    /**
     * A frozen worker holding one expired task's row lock in an open
     * transaction must not hold up the rescue of the others. A second connection locks one expired
     * task ({@code SELECT ... FOR UPDATE}, not committed); the other expired tasks are rescued
     * within a rescue interval or two while the lock is held, and the locked one after it is
     * released.
     */
    @Test
    void aRowLockHeldOnOneExpiredTaskDoesNotStallTheRescueOfTheOthers() throws Exception {
        DbTasks producer = producer();
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(producer.enqueue(TaskRequest.of(KIND, null)).task().id());
        }
        // As if worker "frozen" had claimed all five and stopped heartbeating an hour ago.
        assertThat(sql(
                        "UPDATE dbtasks_task SET status = 'RUNNING', attempt = 1, lease_owner = 'frozen',"
                                + " lease_token = id, started_at = ?, lease_expires_at = ?",
                        java.time.Instant.now().minus(Duration.ofHours(2)),
                        java.time.Instant.now().minus(Duration.ofHours(1))))
                .isEqualTo(5);
        long locked = ids.get(0);
        java.sql.Connection frozen = dataSource().getConnection();
        try {
            frozen.setAutoCommit(false);
            try (java.sql.PreparedStatement ps =
                    frozen.prepareStatement("SELECT id FROM dbtasks_task WHERE id = ? FOR UPDATE")) {
                ps.setLong(1, locked);
                ps.executeQuery().close();
            }
            Duration rescueInterval = Duration.ofMillis(500);
            DbTasks rescuer = engine(b -> b.workerId("rescuer")
                    .queue("elsewhere", 1)
                    .rescueInterval(rescueInterval)
                    .handler(KIND, Void.class, (ctx, p) -> {}));
            rescuer.start();

            org.awaitility.Awaitility.await()
                    .atMost(rescueInterval.multipliedBy(4))
                    .pollInterval(Duration.ofMillis(20))
                    .alias("the 4 unlocked expired tasks rescued while task " + locked + " is locked")
                    .until(() -> ids.stream()
                            .skip(1)
                            .allMatch(id -> rescuer.find(id).orElseThrow().status() == TaskStatus.PENDING));
            assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE id = ? AND status = 'RUNNING'", locked))
                    .isEqualTo(1);
        } finally {
            frozen.rollback();
            frozen.close();
        }
        eventually()
                .alias("the locked task rescued after its lock is released")
                .until(() ->
                        count("SELECT COUNT(*) FROM dbtasks_task WHERE id = ? AND status = 'PENDING'", locked) == 1);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE outcome = 'LEASE_EXPIRED'"))
                .isEqualTo(5);
    }

    @Test
    void stopWaitsForARunningTaskThatFinishesInTimeAndStopsClaiming() throws Exception {
        CountDownLatch started = latch();
        AtomicInteger runs = new AtomicInteger();
        DbTasks tasks = engine(b -> b.handler(KIND, Void.class, (ctx, p) -> {
            runs.incrementAndGet();
            started.countDown();
            Thread.sleep(300);
        }));
        long first = tasks.enqueue(TaskRequest.of(KIND, null)).task().id();
        tasks.start();
        awaitLatch(started);

        boolean clean = tasks.stop(Duration.ofSeconds(10));

        assertThat(clean).isTrue();
        assertThat(tasks.isRunning()).isFalse();
        Task done = tasks.find(first).orElseThrow();
        assertThat(done.status()).isEqualTo(TaskStatus.SUCCEEDED);
        assertThat(tasks.attempts(first)).extracting(Attempt::outcome).containsExactly(AttemptOutcome.SUCCEEDED);
        // A stopped engine still enqueues (producer side) but claims nothing.
        long second = tasks.enqueue(TaskRequest.of(KIND, null)).task().id();
        assertStaysIn(tasks, second, TaskStatus.PENDING, Duration.ofMillis(500));
        assertThat(runs).hasValue(1);
    }

    @Test
    void heartbeatsKeepTheLeaseOfATaskThatRunsLongerThanItAndStopWaitsForIt() throws Exception {
        CountDownLatch started = latch();
        DbTasks worker = engine(b -> b.workerId("long-runner")
                .lease(Duration.ofMillis(1500)) // heartbeat every 500 ms
                .handler(KIND, Void.class, (ctx, p) -> {
                    started.countDown();
                    Thread.sleep(2200);
                }));
        // Works another queue, so it can only rescue (every 50 ms), never claim, this task.
        DbTasks rescuer = engine(b -> b.workerId("rescuer")
                .queue("elsewhere", 1)
                .rescueInterval(Duration.ofMillis(50))
                .handler(KIND, Void.class, (ctx, p) -> {}));
        rescuer.start();
        long id = worker.enqueue(TaskRequest.of(KIND, null)).task().id();
        worker.start();
        awaitLatch(started);
        java.time.Instant firstExpiry = worker.find(id).orElseThrow().leaseExpiresAt();

        boolean clean = worker.stop(Duration.ofSeconds(10));

        assertThat(clean).isTrue();
        Task done = worker.find(id).orElseThrow();
        assertThat(done.status()).isEqualTo(TaskStatus.SUCCEEDED);
        assertThat(done.attempt()).isEqualTo(1);
        List<Attempt> attempts = worker.attempts(id);
        assertThat(attempts).extracting(Attempt::outcome).containsExactly(AttemptOutcome.SUCCEEDED);
        // It ran well past its first lease, which heartbeats renewed, and nobody rescued it.
        assertThat(attempts.get(0).finishedAt()).isAfter(firstExpiry.plusMillis(500));
        assertThat(attempts.get(0).worker()).isEqualTo("long-runner");
    }

    @Test
    void stopHandsBackAnUnfinishedTaskWithoutUsingAnAttemptAndAnotherEngineRunsIt() throws Exception {
        CountDownLatch started = latch();
        CountDownLatch interrupted = latch();
        DbTasks stopping = engine(b -> b.workerId("stopping").handler(KIND, Void.class, (ctx, p) -> {
            started.countDown();
            try {
                Thread.sleep(PATIENCE.toMillis());
            } catch (InterruptedException e) {
                interrupted.countDown();
                throw e;
            }
        }));
        long id = stopping.enqueue(TaskRequest.builder(KIND).maxAttempts(1).build())
                .task()
                .id();
        stopping.start();
        awaitLatch(started);
        assertThat(stopping.find(id).orElseThrow().attempt()).isEqualTo(1);

        boolean clean = stopping.stop(Duration.ofMillis(200));

        assertThat(clean).isFalse();
        awaitLatch(interrupted);
        Task handedBack = stopping.find(id).orElseThrow();
        assertThat(handedBack.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(handedBack.attempt()).isZero(); // the attempt was given back, so maxAttempts 1 still allows a run
        assertThat(handedBack.leaseExpiresAt()).isNull();
        assertThat(handedBack.leaseOwner()).isNull();
        assertThat(handedBack.finishedAt()).isNull();
        assertThat(stopping.attempts(id)).isEmpty();

        DbTasks next = engine(b -> b.workerId("next").handler(KIND, Void.class, (ctx, p) -> {}));
        next.start();
        Task done = awaitStatus(next, id, TaskStatus.SUCCEEDED);
        assertThat(done.attempt()).isEqualTo(1);
        List<Attempt> attempts = next.attempts(id);
        assertThat(attempts).hasSize(1);
        assertThat(attempts.get(0).worker()).isEqualTo("next");
        assertThat(attempts.get(0).attempt()).isEqualTo(1);
        assertThat(attempts.get(0).outcome()).isEqualTo(AttemptOutcome.SUCCEEDED);
    }

    @Test
    void shortTasksAreClaimedAheadButNeverRunMoreHandlersThanSlotsNorWaitForeverBehindSlowOnes() throws Exception {
        String blocking = "lease.block";
        AtomicInteger concurrent = new AtomicInteger();
        AtomicInteger maxConcurrent = new AtomicInteger();
        AtomicInteger blockingRuns = new AtomicInteger();
        CountDownLatch release = latch();
        DbTasks tasks = engine(b -> b.queue(DbTasks.DEFAULT_QUEUE, 2)
                .handler(KIND, Void.class, (ctx, p) -> {})
                .handler(blocking, Void.class, (ctx, p) -> {
                    blockingRuns.incrementAndGet();
                    maxConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
                    try {
                        release.await();
                    } finally {
                        concurrent.decrementAndGet();
                    }
                }));
        tasks.start();
        teachThatTasksAreShort(tasks);

        tasks.enqueueAll(
                requests(10, () -> TaskRequest.builder(blocking).maxAttempts(1).build()));

        // Two run; the eight others (four per slot) are claimed ahead, leased and waiting for a slot.
        eventually()
                .alias("two running and eight claimed ahead")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'RUNNING'") == 10);
        // a claimed task is RUNNING before its handler is entered, so the second handler may start a moment later
        eventually().alias("both slots' handlers entered").until(() -> blockingRuns.get() == 2);

        // The two handlers block: after a second of waiting the eight go back, unstarted, and the loop
        // claims no more ahead while its tasks are this slow.
        eventually()
                .alias("the eight claimed ahead handed back")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'PENDING'") == 8);
        Thread.sleep(300); // several poll intervals
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'RUNNING'"))
                .isEqualTo(2);
        assertThat(count(
                        "SELECT COUNT(*) FROM dbtasks_task WHERE kind = ? AND status = 'PENDING' AND attempt = 0",
                        blocking))
                .isEqualTo(8);
        assertThat(blockingRuns).hasValue(2);
        assertThat(maxConcurrent).hasValue(2);

        release.countDown();
        eventually()
                .alias("all ten run, two at a time")
                .until(() ->
                        count("SELECT COUNT(*) FROM dbtasks_task WHERE kind = ? AND status = 'SUCCEEDED'", blocking)
                                == 10);
        assertThat(blockingRuns).hasValue(10);
        assertThat(maxConcurrent).hasValue(2);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE outcome <> 'SUCCEEDED'"))
                .isZero();
    }

    @Test
    void withClaimAheadOffShortTasksAreClaimedOnlyForFreeSlots() throws Exception {
        String blocking = "lease.block";
        AtomicInteger blockingRuns = new AtomicInteger();
        CountDownLatch release = latch();
        DbTasks tasks = engine(b -> b.queue(DbTasks.DEFAULT_QUEUE, 2)
                .claimAhead(false)
                .handler(KIND, Void.class, (ctx, p) -> {})
                .handler(blocking, Void.class, (ctx, p) -> {
                    blockingRuns.incrementAndGet();
                    release.await();
                }));
        tasks.start();
        teachThatTasksAreShort(tasks);

        tasks.enqueueAll(requests(10, () -> TaskRequest.builder(blocking).build()));
        eventually().alias("both slots busy").until(() -> blockingRuns.get() == 2);
        Thread.sleep(300); // several poll intervals: with claim-ahead on, four more would now be RUNNING

        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'RUNNING'"))
                .isEqualTo(2);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'PENDING'"))
                .isEqualTo(8);
        release.countDown();
        eventually()
                .until(() ->
                        count("SELECT COUNT(*) FROM dbtasks_task WHERE kind = ? AND status = 'SUCCEEDED'", blocking)
                                == 10);
    }

    @Test
    void stopHandsBackTasksClaimedAheadUnstartedWithoutUsingAnAttempt() throws Exception {
        CountDownLatch blocked = latch();
        AtomicInteger calls = new AtomicInteger();
        DbTasks tasks = engine(b -> b.queue(DbTasks.DEFAULT_QUEUE, 1).handler(KIND, Void.class, (ctx, p) -> {
            if (calls.incrementAndGet() > 20) {
                blocked.countDown();
                Thread.sleep(PATIENCE.toMillis());
            }
        }));
        List<TaskRequest> batch = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            batch.add(TaskRequest.builder(KIND).maxAttempts(1).build());
        }
        tasks.enqueueAll(batch);
        tasks.start();
        awaitLatch(blocked);
        // the 21st blocks; with 20 short tasks seen, up to four more wait claimed ahead: the last four
        eventually()
                .alias("one running and four claimed ahead")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'RUNNING'") == 5);

        tasks.stop(Duration.ofMillis(200));

        eventually()
                .alias("the running one and the four claimed ahead handed back")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'PENDING' AND attempt = 0") == 5);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'SUCCEEDED'"))
                .isEqualTo(20);
        assertThat(calls).hasValue(21);
    }

    @Test
    void slowTasksAreNotClaimedAheadSoAnotherEngineCanTakeThem() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch secondStarted = latch();
        CountDownLatch release = latch();
        DbTasks tasks = engine(b -> b.queue(DbTasks.DEFAULT_QUEUE, 1).handler(KIND, Void.class, (ctx, p) -> {
            if (calls.incrementAndGet() == 1) {
                Thread.sleep(200); // a slow task: from now on the loop knows tasks take ~200 ms
                return;
            }
            secondStarted.countDown();
            release.await();
        }));
        List<TaskRequest> three = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            three.add(TaskRequest.builder(KIND).build());
        }
        tasks.enqueueAll(three);
        tasks.start();

        awaitLatch(secondStarted);
        eventually()
                .alias("the first task recorded")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'SUCCEEDED'") == 1);
        Thread.sleep(300); // several poll intervals with a free claim-ahead slot, were tasks short
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'RUNNING'"))
                .isEqualTo(1);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'PENDING'"))
                .isEqualTo(1);

        DbTasks other = engine(b -> b.workerId("other").handler(KIND, Void.class, (ctx, p) -> {}));
        other.start();
        eventually()
                .alias("the other engine runs the third task")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_attempt WHERE worker = 'other'") == 1);
        release.countDown();
        eventually().until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'SUCCEEDED'") == 3);
    }

    /** Runs 50 no-op tasks, so the claim loop knows this queue's tasks are short. */
    private static void teachThatTasksAreShort(DbTasks tasks) {
        tasks.enqueueAll(requests(50, () -> TaskRequest.builder(KIND).build()));
        eventually().until(() -> tasks.stats().tasks().get(TaskStatus.SUCCEEDED) == 50);
    }

    private static List<TaskRequest> requests(int n, Supplier<TaskRequest> request) {
        List<TaskRequest> requests = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            requests.add(request.get());
        }
        return requests;
    }

    @Test
    void fencingTokensGrowWithEveryClaimOfATask() {
        AtomicInteger calls = new AtomicInteger();
        List<Long> seen = Collections.synchronizedList(new ArrayList<>());
        DbTasks tasks = engine(b -> b.handler(KIND, Void.class, (ctx, p) -> {
            seen.add(ctx.fencingToken());
            if (calls.incrementAndGet() < 4) {
                throw new IllegalStateException("not yet");
            }
        }));
        long id = tasks.enqueue(TaskRequest.builder(KIND)
                        .maxAttempts(4)
                        .retryPolicy(io.dbtasks.RetryPolicy.fixed(Duration.ZERO))
                        .build())
                .task()
                .id();
        tasks.start();

        Task done = awaitStatus(tasks, id, TaskStatus.SUCCEEDED);

        assertThat(seen).hasSize(4).isSorted().doesNotHaveDuplicates();
        assertThat(tasks.attempts(id)).extracting(Attempt::fencingToken).containsExactlyElementsOf(seen);
        assertThat(done.fencingToken()).isEqualTo(seen.get(3));
    }
}
