package io.dbtasks.internal.execution;

import io.dbtasks.AttemptOutcome;
import io.dbtasks.DbTasksException;
import io.dbtasks.InvalidPayloadException;
import io.dbtasks.Task;
import io.dbtasks.TaskContext;
import io.dbtasks.TaskHandler;
import io.dbtasks.TaskStatus;
import io.dbtasks.event.TaskEvent;
import io.dbtasks.internal.completion.AddedStep;
import io.dbtasks.internal.completion.Attempts;
import io.dbtasks.internal.completion.Completions;
import io.dbtasks.internal.dialect.PostgresPooling;
import io.dbtasks.internal.query.TaskRows;
import io.dbtasks.internal.support.Events;
import io.dbtasks.lock.LeaseLostException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt at one claimed task, and its {@link TaskContext}.
 *
 * <p>Exactly one party settles an attempt, decided by a compare-and-set on {@code settled}: the
 * handler's thread when it returns or throws, the timeout timer, the heartbeat that finds the lease
 * lost, or shutdown handing the task back. The others only interrupt the handler; whatever it does
 * afterwards is discarded. Settling writes with the attempt's token, so even a stale settle after a
 * takeover changes nothing in the database.
 *
 * <p>It is handed what it needs: its
 * kind's handler (from the registry), the {@link Completer} its outcome goes to, the timer for its
 * timeout, the event publisher, and an {@code onDone} callback owned by its queue worker, which
 * frees its slot. It never sees the engine.
 */
public final class Execution implements Runnable, TaskContext {
    private static final Logger log = LoggerFactory.getLogger(Execution.class);

    /**
     * What every execution of one engine shares: its handlers, the outcome sink, the timer for
     * timeouts, the event publisher and the retry rules.
     *
     * @param handlers the registered handlers, by kind
     * @param completer where outcomes are written
     * @param timer runs timeouts
     * @param events publishes what happened
     * @param nonRetryable whether a throwable ends its task without retry
     * @param random uniform numbers in [0, 1) for backoff jitter
     */
    public record Wiring(
            HandlerRegistry handlers,
            Completer completer,
            ScheduledExecutorService timer,
            Events events,
            Predicate<Throwable> nonRetryable,
            DoubleSupplier random) {}

    private final TaskRows.Claimed claimed;
    private final Task task;
    private final Wiring wiring;
    private final Completer completer;
    private final Events events;
    private final Consumer<Execution> onDone;
    private final AtomicBoolean lostReported = new AtomicBoolean();
    private final AtomicBoolean longRunningReported = new AtomicBoolean();
    private volatile boolean started;
    private final AtomicBoolean settled = new AtomicBoolean();
    private final long claimedNanos = System.nanoTime();
    private volatile long startNanos = claimedNanos; // reset when it starts: it may wait claimed ahead
    private volatile long handlerNanos = -1;
    private volatile boolean leaseLost;
    private volatile boolean cancelRequested;
    private volatile String result;
    /** Steps this attempt adds to its workflow if it succeeds. */
    private final List<AddedStep> added = new java.util.concurrent.CopyOnWriteArrayList<>();

    private Thread thread; // guarded by this
    private ScheduledFuture<?> timeoutFuture; // guarded by this

    /**
     * @param claimed the claimed task
     * @param wiring what the engine's executions share
     * @param onDone called once the execution has ended on its thread, by its queue worker's
     *     bookkeeping; not called for an execution handed back before it ran
     */
    public Execution(TaskRows.Claimed claimed, Wiring wiring, Consumer<Execution> onDone) {
        this.claimed = claimed;
        this.task = claimed.task();
        this.wiring = wiring;
        this.completer = wiring.completer();
        this.events = wiring.events();
        this.onDone = onDone;
    }

    public Task task() {
        return task;
    }

    /** @return when it was claimed, by {@link System#nanoTime()} */
    public long claimedNanos() {
        return claimedNanos;
    }

    /** @return how long the handler ran, in nanoseconds, or -1 if it did not run (yet) */
    public long handlerNanos() {
        return handlerNanos;
    }

    boolean isSettled() {
        return settled.get();
    }

    @Override
    public void run() {
        synchronized (this) {
            thread = Thread.currentThread();
        }
        startNanos = System.nanoTime();
        try {
            if (cancelRequested && settled.compareAndSet(false, true)) {
                // cancelled while it waited claimed ahead: it never ran, and is not retried
                recordCancelled(new CancellationException("cancelled before it started"), 0);
            } else if (!settled.get()) {
                started = true;
                events.task(TaskEvent.Type.STARTED, task, null);
                execute();
            }
        } catch (RuntimeException e) {
            // Recording the outcome failed (database down): the lease will expire and rescue retries it.
            log.error(
                    "Task {} ({}): could not record the outcome of attempt {}; it will be rescued after its lease"
                            + " expires",
                    task.id(),
                    task.kind(),
                    task.attempt(),
                    e);
        } finally {
            synchronized (this) {
                thread = null;
                if (timeoutFuture != null) {
                    timeoutFuture.cancel(false);
                }
            }
            Thread.interrupted(); // clear a late interrupt so it does not leak into the pool's next task
            onDone.accept(this);
        }
    }

    private void execute() {
        HandlerRegistry handlers = wiring.handlers();
        HandlerRegistry.Registration<?> registration = handlers.find(task.kind());
        if (registration == null) {
            settleFailure(handlers.unknownKind(task.kind()), AttemptOutcome.FAILED, false);
            return;
        }
        Object payload;
        try {
            payload = handlers.read(task.kind(), task.payload(), registration.payloadType());
        } catch (InvalidPayloadException e) {
            settleFailure(e, AttemptOutcome.FAILED, false);
            return;
        }
        Duration timeout = claimed.timeout();
        if (timeout != null) {
            synchronized (this) {
                timeoutFuture = wiring.timer().schedule(this::onTimeout, timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        if (registration.transactional() != null) {
            executeInTransaction(registration, payload);
            return;
        }
        try {
            invoke(registration, payload);
        } catch (Throwable t) {
            handlerNanos = System.nanoTime() - startNanos;
            onHandlerThrew(t);
            return;
        }
        handlerNanos = System.nanoTime() - startNanos;
        if (settled.compareAndSet(false, true)) {
            completer.succeed(task, elapsedMillis(), result, List.copyOf(added), this::succeeded);
        } else {
            log.warn(
                    "Task {} ({}) attempt {}: the handler returned after its attempt was settled ({}); result"
                            + " discarded",
                    task.id(),
                    task.kind(),
                    task.attempt(),
                    whySettled());
        }
    }

    /** The handler threw: a cancellation, or a failed attempt to retry or fail. */
    private void onHandlerThrew(Throwable t) {
        if (t instanceof VirtualMachineError vme && !(t instanceof StackOverflowError)) {
            log.error("Task {} ({}): handler threw {}", task.id(), task.kind(), vme.toString());
        }
        if (cancelRequested) {
            // The engine interrupted the handler because an operator cancelled the task; whatever
            // it threw in response (often not an InterruptedException) ends it CANCELLED, not retried.
            if (settled.compareAndSet(false, true)) {
                recordCancelled(t, elapsedMillis());
            }
            return;
        }
        settleFailure(t, AttemptOutcome.FAILED, !wiring.nonRetryable().test(t));
    }

    /**
     * Runs a transactional handler and records its success on the same connection: commit only if
     * the guarded completion matched our lease, else roll the effects back with it.
     */
    private void executeInTransaction(HandlerRegistry.Registration<?> registration, Object payload) {
        // Borrowed like every engine connection: statementTimeout bounds the handler's statements and
        // the commit, and the outcome counts for health.
        completer.borrow("Transactional task " + task.id(), c -> {
            c.setAutoCommit(false);
            try {
                invokeTransactional(registration, c, payload);
            } catch (Throwable t) {
                handlerNanos = System.nanoTime() - startNanos;
                rollbackQuietly(c, t);
                onHandlerThrew(t);
                return null;
            }
            handlerNanos = System.nanoTime() - startNanos;
            if (!settled.compareAndSet(false, true)) {
                c.rollback();
                log.warn(
                        "Task {} ({}) attempt {}: the handler returned after its attempt was settled ({}); its"
                                + " transaction was rolled back",
                        task.id(),
                        task.kind(),
                        task.attempt(),
                        whySettled());
                return null;
            }
            Thread.interrupted(); // a late interrupt must not abort the commit of a valid completion
            java.util.Set<String> released = new java.util.HashSet<>();
            if (completer.succeedOn(c, task, elapsedMillis(), result, List.copyOf(added), released)) {
                PostgresPooling.requireNotAborted(c);
                c.commit();
                completer.wakeReleased(released);
                log.debug("Task {} ({}) attempt {} succeeded with its effects", task.id(), task.kind(), task.attempt());
                events.task(TaskEvent.Type.SUCCEEDED, task, null);
            } else {
                c.rollback();
                reportLost("returned (its transaction, effects included, was rolled back)");
            }
            return null;
        });
    }

    @SuppressWarnings("unchecked")
    private <P> void invokeTransactional(HandlerRegistry.Registration<P> registration, Connection c, Object payload)
            throws Exception {
        registration.transactional().handle(this, c, (P) payload);
    }

    private static void rollbackQuietly(Connection c, Throwable cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    @SuppressWarnings("unchecked")
    private <P> void invoke(HandlerRegistry.Registration<P> registration, Object payload) throws Exception {
        TaskHandler<P> handler = registration.handler();
        handler.handle(this, (P) payload);
    }

    private void settleFailure(Throwable error, AttemptOutcome outcome, boolean retryable) {
        if (!settled.compareAndSet(false, true)) {
            log.warn(
                    "Task {} ({}) attempt {} failed after it was settled ({}); result discarded: {}",
                    task.id(),
                    task.kind(),
                    task.attempt(),
                    whySettled(),
                    error.toString());
            return;
        }
        recordFailure(error, outcome, retryable);
    }

    /**
     * Queues a failed attempt of a settled execution for the batch writer: a retry after backoff, or
     * FAILED. The task's events are held until it is written, so a claim of the retry cannot be
     * published first.
     */
    private void recordFailure(Throwable error, AttemptOutcome outcome, boolean retryable) {
        boolean retry = retryable && task.attempt() < task.maxAttempts();
        Duration delay = retry ? claimed.retryPolicy().delayAfter(task.attempt(), wiring.random()) : null;
        Completions.Failure failure = new Completions.Failure(task, outcome, error, delay, elapsedMillis());
        events.hold(task.id());
        try {
            completer.fail(failure, (written, writeError) -> failureWritten(failure, retryable, written, writeError));
        } catch (RuntimeException e) {
            events.release(task.id(), null);
            throw e;
        }
    }

    /** The batch writer's answer for a failure: logs it and publishes its event. */
    private void failureWritten(
            Completions.Failure f, boolean retryable, Optional<TaskStatus> written, RuntimeException writeError) {
        TaskEvent event = null;
        String reason = Attempts.reason(f.error());
        try {
            if (writeError != null) {
                log.error(
                        "Task {} ({}): could not record the outcome of attempt {}; it will be rescued after its"
                                + " lease expires",
                        task.id(),
                        task.kind(),
                        task.attempt(),
                        writeError);
            } else if (written.isEmpty()) {
                reportLost(f.outcome().name());
            } else if (written.get() == TaskStatus.CANCELLED) {
                log.info(
                        "Task {} ({}) attempt {}/{} {}: {}; not retried because an operator cancelled it",
                        task.id(),
                        task.kind(),
                        task.attempt(),
                        task.maxAttempts(),
                        f.outcome(),
                        reason);
                event = events.event(TaskEvent.Type.CANCELLED, task, reason);
            } else if (written.get() == TaskStatus.PENDING) {
                log.info(
                        "Task {} ({}) attempt {}/{} {}: {}; retry in {} ms",
                        task.id(),
                        task.kind(),
                        task.attempt(),
                        task.maxAttempts(),
                        f.outcome(),
                        reason,
                        f.retryDelay().toMillis());
                event = events.retryScheduled(task, f.retryDelay(), f.outcome() + ": " + reason);
            } else {
                log.warn(
                        "Task {} ({}) FAILED on attempt {}/{} ({}): {}",
                        task.id(),
                        task.kind(),
                        task.attempt(),
                        task.maxAttempts(),
                        retryable ? "out of attempts" : "not retryable",
                        reason,
                        f.error());
                event = events.event(TaskEvent.Type.FAILED, task, f.outcome() + ": " + reason);
            }
        } finally {
            events.release(task.id(), event);
        }
    }

    /** Writes CANCELLED for an attempt an operator cancelled; its event is held as a failure's is. */
    private void recordCancelled(Throwable error, long durationMs) {
        events.hold(task.id());
        TaskEvent event = null;
        try {
            if (completer.cancelled(task, error, durationMs)) {
                log.debug("Task {} ({}) attempt {} cancelled", task.id(), task.kind(), task.attempt());
                event = events.event(TaskEvent.Type.CANCELLED, task, "Cancelled by an operator");
            } else {
                reportLost("cancelled");
            }
        } finally {
            events.release(task.id(), event);
        }
    }

    /** The batch writer's answer for this attempt's success. */
    private void succeeded(boolean recorded) {
        if (recorded) {
            events.task(TaskEvent.Type.SUCCEEDED, task, null);
        }
        report(recorded, "succeeded");
    }

    private void report(boolean recorded, String what) {
        if (recorded) {
            log.debug("Task {} ({}) attempt {} {}", task.id(), task.kind(), task.attempt(), what);
        } else {
            reportLost(what);
        }
    }

    /** Publishes LEASE_LOST once per execution, whoever notices first. */
    private void publishLost(String detail) {
        if (lostReported.compareAndSet(false, true)) {
            events.task(TaskEvent.Type.LEASE_LOST, task, detail);
        }
    }

    private void reportLost(String what) {
        leaseLost = true;
        publishLost(what + " but the lease no longer holds; result discarded");
        log.warn(
                "Task {} ({}) attempt {}: {} but lease token {} no longer holds (the lease expired and was taken"
                        + " over, or an operator changed the task); result discarded",
                task.id(),
                task.kind(),
                task.attempt(),
                what,
                task.fencingToken());
    }

    private void onTimeout() {
        if (settled.compareAndSet(false, true)) {
            TimeoutException e = new TimeoutException(
                    "Attempt exceeded its timeout of " + claimed.timeout().toMillis() + " ms and was interrupted");
            try {
                recordFailure(e, AttemptOutcome.TIMED_OUT, true);
            } catch (DbTasksException dbe) {
                log.error("Task {}: could not record its timeout; it will be rescued", task.id(), dbe);
            }
        }
        interrupt();
    }

    /** Called by the heartbeat when the guarded renewal matched 0 rows. */
    void onLeaseLost() {
        leaseLost = true;
        if (settled.compareAndSet(false, true)) {
            publishLost("lease lost (expired and taken over, or changed by an operator); handler interrupted");
            log.warn(
                    "Task {} ({}) attempt {}: lease token {} lost (expired and taken over, or changed by an"
                            + " operator); interrupting the handler and discarding its result",
                    task.id(),
                    task.kind(),
                    task.attempt(),
                    task.fencingToken());
        }
        interrupt();
    }

    /** Called by the heartbeat when an operator asked to cancel. */
    void onCancelRequested() {
        if (!cancelRequested) {
            cancelRequested = true;
            log.info("Task {} ({}): cancellation requested; interrupting the handler", task.id(), task.kind());
            interrupt();
        }
    }

    /**
     * Shutdown, or a task claimed ahead that waited too long: gives the task back to PENDING without
     * using up the attempt (CANCELLED if an operator asked to cancel it meanwhile).
     */
    public void handBack() {
        if (settled.compareAndSet(false, true)) {
            leaseLost = true;
            events.hold(task.id()); // the next claim of a task handed back must not be published first
            TaskEvent event = null;
            try {
                Optional<TaskStatus> status = completer.handBack(task);
                if (status.isPresent()) {
                    log.info("Task {} ({}) handed back: now {}", task.id(), task.kind(), status.get());
                    boolean cancelled = status.get() == TaskStatus.CANCELLED;
                    event = events.event(
                            cancelled ? TaskEvent.Type.CANCELLED : TaskEvent.Type.HANDED_BACK,
                            task,
                            cancelled ? "Cancelled by an operator; handed back" : null);
                }
            } catch (DbTasksException e) {
                log.error("Task {}: could not hand it back; it will be rescued when its lease expires", task.id(), e);
            } finally {
                events.release(task.id(), event);
            }
        }
        interrupt();
    }

    /**
     * Publishes LONG_RUNNING once if the handler has been running (started, not settled) for at
     * least {@code thresholdNanos}.
     */
    void checkLongRunning(long thresholdNanos) {
        if (started
                && !settled.get()
                && System.nanoTime() - startNanos >= thresholdNanos
                && longRunningReported.compareAndSet(false, true)) {
            log.warn(
                    "Task {} ({}, queue {}) attempt {} has been running for {} ms, past its long-running threshold",
                    task.id(),
                    task.kind(),
                    task.queue(),
                    task.attempt(),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
            events.task(
                    TaskEvent.Type.LONG_RUNNING,
                    task,
                    "running for " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos) + " ms");
        }
    }

    private synchronized void interrupt() {
        if (thread != null) {
            thread.interrupt();
        }
    }

    private String whySettled() {
        return leaseLost ? "lease lost or handed back" : "timed out";
    }

    private long elapsedMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    // --- TaskContext ---

    @Override
    public long taskId() {
        return task.id();
    }

    @Override
    public String kind() {
        return task.kind();
    }

    @Override
    public String queue() {
        return task.queue();
    }

    @Override
    public int attempt() {
        return task.attempt();
    }

    @Override
    public int maxAttempts() {
        return task.maxAttempts();
    }

    @Override
    public long fencingToken() {
        return task.fencingToken();
    }

    @Override
    public String traceParent() {
        return task.traceParent();
    }

    @Override
    public Instant runAt() {
        return task.runAt();
    }

    @Override
    public java.util.Optional<String> idempotencyKey() {
        return java.util.Optional.ofNullable(task.idempotencyKey());
    }

    @Override
    public void setResult(String json) {
        if (json != null && json.length() > MAX_RESULT_CHARS) {
            throw new IllegalArgumentException("A task's result may have at most " + MAX_RESULT_CHARS
                    + " characters, got " + json.length() + "; store large data in your own table and"
                    + " return its key");
        }
        result = json;
    }

    @Override
    public void addStep(String step, io.dbtasks.TaskRequest request, String... downstream) {
        java.util.Objects.requireNonNull(step, "step");
        java.util.Objects.requireNonNull(request, "request");
        if (task.workflowId() == null) {
            throw new IllegalStateException(
                    "Task " + task.id() + " is not a workflow step; only a step can add steps to its workflow");
        }
        if (step.isBlank() || step.length() > io.dbtasks.workflow.Workflow.MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("A step name must have 1 to "
                    + io.dbtasks.workflow.Workflow.MAX_NAME_LENGTH + " characters and not be blank; got '" + step
                    + "'");
        }
        if (request.idempotencyKey() != null) {
            throw new IllegalArgumentException("Added step '" + step + "' has an idempotency key; steps take none");
        }
        for (AddedStep a : added) {
            if (a.name().equals(step)) {
                throw new IllegalArgumentException("This attempt added a step named '" + step + "' already");
            }
        }
        List<String> waiting = List.of(downstream);
        completer.checkAddedStep(task, step, waiting);
        added.add(new AddedStep(step, request, waiting));
    }

    @Override
    public java.util.Optional<Long> workflowId() {
        return java.util.Optional.ofNullable(task.workflowId());
    }

    @Override
    public java.util.Map<String, String> dependencyResults() {
        return task.workflowId() == null ? java.util.Map.of() : completer.dependencyResults(task.id());
    }

    @Override
    public String workerId() {
        return task.leaseOwner();
    }

    @Override
    public boolean isLeaseLost() {
        return leaseLost;
    }

    @Override
    public boolean isCancellationRequested() {
        return cancelRequested;
    }

    @Override
    public void heartbeat() {
        if (!leaseLost && completer.renew(task)) {
            return;
        }
        onLeaseLost();
        throw new LeaseLostException("Task " + task.id() + " lease token " + task.fencingToken()
                + " is no longer held by worker " + task.leaseOwner() + "; stop work and return");
    }
}
