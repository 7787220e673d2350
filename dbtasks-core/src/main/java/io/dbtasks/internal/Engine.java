package io.dbtasks.internal;

import io.dbtasks.DbTasksException;
import io.dbtasks.event.WorkerEvent;
import io.dbtasks.inbox.Inbox;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.dialect.Dialects;
import io.dbtasks.internal.inbox.JdbcInbox;
import io.dbtasks.internal.lock.JdbcLeaseLocks;
import io.dbtasks.internal.once.JdbcRunOnceGuards;
import io.dbtasks.internal.schedule.JdbcSchedules;
import io.dbtasks.internal.schedule.ScheduleConfig;
import io.dbtasks.internal.schedule.SchedulePoller;
import io.dbtasks.lock.LeaseLocks;
import io.dbtasks.lock.spi.Renewal;
import io.dbtasks.once.RunOnceGuards;
import io.dbtasks.schedule.Schedule;
import io.dbtasks.schedule.Schedules;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * Wires the parts of one engine and runs its lifecycle: one claim loop per queue ({@link
 * QueueWorker}), handler threads (its own pool or the caller's executor), the outcome writer, and a
 * small scheduler for heartbeats, timeouts and rescue ({@link LeaseKeeper}). It holds no task logic:
 * its parts are handed what they need at start and never reach back into it, and only {@code
 * DbTasks} calls it.
 */
public final class Engine {
    private static final Logger log = LoggerFactory.getLogger(Engine.class);

    private final EngineConfig config;
    private final DataSource dataSource;
    private final Jdbc jdbc;
    private final Dialect dialect;
    private final HandlerRegistry handlers;
    private final Enqueuer enqueuer;
    private final TaskQueries queries;
    private final TaskOperations operations;
    private final Leases leases;
    private final Completions completions;
    private final Renewal renewal = new Renewal("dbtasks-renewal-");
    private final LeaseLocks locks;
    private final JdbcRunOnceGuards guards;
    /** Runs again the run-once keys whose runner died, for the registered targets; set before start. */
    private io.dbtasks.internal.once.GuardRescue guardRescue;

    private final Inbox inbox;
    private final ScheduleConfig scheduleConfig;
    private final SchedulePoller schedulePoller;
    private final JdbcSchedules schedules;
    private final QueueControl queueControl;
    /**
     * Slots per claim loop: a queue with at least twice as many gets a second loop claiming in
     * parallel. More loops step over each other's locked rows and split the claims into smaller batches, so
     * loops are few and large (the measurements are in BENCHMARKS.md).
     */
    static final int SLOTS_PER_CLAIM_LOOP = 32;

    static final int MAX_CLAIM_LOOPS = 2;

    /** How long a stop waits for listeners to take the events still queued. */
    static final Duration EVENT_DRAIN = Duration.ofSeconds(2);
    /**
     * How long {@link #stop} waits, at most, for background work already running (a heartbeat, a
     * rescue, a VACUUM or ANALYZE of the task table) once it has cancelled the rest.
     */
    static final long SCHEDULER_DRAIN_SECONDS = 5;

    private final Map<String, List<QueueWorker>> workers = new ConcurrentHashMap<>();
    private final RunningSet running = new RunningSet();
    private final Events events;
    private final Object lifecycle = new Object();
    private volatile boolean started;
    private volatile boolean closed;
    private ExecutorService executor;
    private ScheduledExecutorService scheduler;
    private volatile AutoCloseable listener;
    private volatile LeaseKeeper keeper;
    private Duration retentionInterval = Duration.ZERO;
    private Map<String, Duration> longRunningByKind = Map.of();
    private Map<String, Duration> longRunningByQueue = Map.of();
    private Map<io.dbtasks.TaskStatus, Duration> taskRetention = Map.of();
    private Duration guardRetention = Duration.ZERO;
    private Duration inboxRetention = Duration.ZERO;
    /** Whether to LISTEN for other instances' enqueues; not behind a declared transaction pooler. */
    private boolean listen = true;

    private OutcomeBatcher successes;
    /** Per queue, the last time bucket a retry's wake-up was scheduled for (see {@link #retryWritten}). */
    private final Map<String, java.util.concurrent.atomic.AtomicLong> retryWakes =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** Retries due within this span share one wake-up, at its end. */
    private static final long RETRY_WAKE_BUCKET_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private final EnqueueSignals enqueueSignals;
    /** Whether enqueueing and claiming work, apart from other units of work; see {@link PathHealth}. */
    private final PathHealth enqueueHealth = new PathHealth("an enqueue", PathHealth.DEFAULT_HANG);

    private final PathHealth claimHealth = new PathHealth("a claim", PathHealth.DEFAULT_HANG);

    /** What this engine can run; its claims take nothing else. */
    private final Capabilities capabilities;
    /** The job invoker's allow-listed targets; empty: it calls any target. Set before start. */
    private volatile java.util.function.Supplier<java.util.Optional<? extends java.util.Collection<String>>>
            jobTargets = java.util.Optional::empty;
    /** How long tasks no live engine can run wait before they are failed; zero: never. */
    private Duration unclaimableGrace = Duration.ofMinutes(10);

    private volatile ForeignTaskWatch foreignTasks;

    private Engine(
            DataSource dataSource,
            EngineConfig config,
            HandlerRegistry handlers,
            Dialect dialect,
            ScheduleConfig scheduleConfig,
            String sessionSetup) {
        this.config = config;
        this.scheduleConfig = scheduleConfig;
        this.dialect = dialect;
        this.handlers = handlers;
        this.dataSource = dataSource;
        this.jdbc = new Jdbc(dataSource, config.statementTimeout(), new HealthTracker(), sessionSetup);
        this.events = new Events(config.workerId(), config.listeners());
        this.events.start(); // producer-only engines publish ENQUEUED too
        Attempts attempts = new Attempts(dialect);
        this.enqueueSignals = new EnqueueSignals(jdbc, dialect, config.enqueueSignalInterval());
        this.enqueuer =
                new Enqueuer(jdbc, dialect, handlers, config, this::wake, events, enqueueSignals, enqueueHealth);
        this.queries = new TaskQueries(jdbc, dialect);
        this.operations = new TaskOperations(jdbc, dialect, queries, this::wake);
        this.capabilities =
                new Capabilities(handlers.kinds(), io.dbtasks.job.JobDefinitions.KIND, () -> jobTargets.get());
        this.leases = new Leases(jdbc, dialect, attempts, config, events, capabilities::claimable);
        this.completions = new Completions(jdbc, dialect, attempts);
        this.locks = new JdbcLeaseLocks(jdbc, dialect, config.workerId(), renewal);
        this.guards = new JdbcRunOnceGuards(jdbc, dialect, config.workerId(), renewal);
        this.inbox = new JdbcInbox(jdbc, dialect);
        this.queueControl = new QueueControl(
                jdbc, dialect, Math.min(1000, config.pollInterval().toMillis()), this::wake);
        this.schedulePoller = new SchedulePoller(jdbc, dialect, enqueuer, scheduleConfig, handlers.kinds());
        this.schedules = new JdbcSchedules(jdbc, dialect, handlers, scheduleConfig.clock(), schedulePoller);
    }

    /** Detects the dialect, migrates if asked, and wires an engine without schedules. */
    public static Engine create(
            DataSource dataSource,
            EngineConfig config,
            HandlerRegistry handlers,
            JsonMapper mapper,
            boolean migrate,
            Boolean transactionPooling) {
        return create(
                dataSource,
                config,
                handlers,
                mapper,
                migrate,
                transactionPooling,
                new ScheduleConfig(List.of(), true, Duration.ofSeconds(1), 250, null));
    }

    /** Detects the dialect, migrates if asked, and wires an engine that is not yet started. */
    public static Engine create(
            DataSource dataSource,
            EngineConfig config,
            HandlerRegistry handlers,
            JsonMapper mapper,
            boolean migrate,
            Boolean transactionPooling,
            ScheduleConfig scheduleConfig) {
        Dialect dialect = Dialects.detect(dataSource);
        DataSource connections;
        try {
            connections = dialect.connections(dataSource, transactionPooling);
        } catch (java.sql.SQLException e) {
            throw Jdbc.failure("Checking for a connection pooler", e);
        }
        if (migrate) {
            migrate(connections, dialect);
        }
        // Frozen claims and settles give their rows back after the lease; not behind a pooler, where
        // a session setting would reach other clients' sessions.
        String sessionSetup = Boolean.TRUE.equals(transactionPooling) || dialect.behindPooler(connections)
                ? null
                : dialect.idleInTransactionLimit(config.lease()).orElse(null);
        Engine engine = new Engine(connections, config, handlers, dialect, scheduleConfig, sessionSetup);
        engine.listen = !Boolean.TRUE.equals(transactionPooling);
        return engine;
    }

    /** Applies the dialect's migrations with dbtasks' own history table. */
    public static void migrate(DataSource dataSource, Dialect dialect) {
        try {
            Flyway.configure(Engine.class.getClassLoader())
                    .dataSource(dataSource)
                    .table("dbtasks_schema_history")
                    .locations("classpath:io/dbtasks/migration/" + dialect.name())
                    .baselineOnMigrate(true)
                    .baselineVersion("0")
                    .load()
                    .migrate();
        } catch (RuntimeException e) {
            throw new DbTasksException(
                    "Migrating the dbtasks schema (" + dialect.name() + ") failed: "
                            + e.getMessage() + "; check that the database user may create tables, or migrate"
                            + " io/dbtasks/migration/" + dialect.name() + " yourself and build with migrate(false)",
                    e);
        }
    }

    public void start() {
        synchronized (lifecycle) {
            if (closed) {
                throw new IllegalStateException("This DbTasks was stopped; build a new one");
            }
            if (started) {
                return;
            }
            for (Schedule declared : scheduleConfig.declared()) {
                schedules.save(declared, true);
            }
            started = true;
            if (scheduleConfig.polling()) {
                schedulePoller.start(config.workerId());
            }
            if (guardRescue != null) {
                guardRescue.start(config.workerId());
            }
            if (config.queues().isEmpty()) {
                log.info("dbtasks {} started without workers (producer only)", config.workerId());
                events.publish(new WorkerEvent(WorkerEvent.Type.STARTED, config.workerId(), Map.of(), Instant.now()));
                return;
            }
            int threads = config.queues().values().stream()
                    .mapToInt(Integer::intValue)
                    .sum();
            executor = config.executor() != null
                    ? config.executor()
                    : new ThreadPoolExecutor(
                            threads,
                            threads,
                            60,
                            TimeUnit.SECONDS,
                            new LinkedBlockingQueue<>(),
                            daemonThreads("dbtasks-worker-"));
            ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(3, daemonThreads("dbtasks-lease-"));
            s.setRemoveOnCancelPolicy(true);
            scheduler = s;
            successes = new OutcomeBatcher(completions, this::retryWritten, threads);
            successes.start();
            Execution.Wiring wiring = new Execution.Wiring(
                    handlers,
                    new Completer(jdbc, completions, leases, successes),
                    scheduler,
                    events,
                    config::isNonRetryable,
                    config.random());
            LeaseKeeper keeper =
                    new LeaseKeeper(running, leases, config.heartbeatInterval(), config.rescueInterval(), () -> closed);
            this.keeper = keeper;
            Duration longRunning = config.longRunningThreshold();
            long shortest = java.util.stream.Stream.concat(
                            java.util.stream.Stream.of(longRunning),
                            java.util.stream.Stream.concat(
                                    longRunningByKind.values().stream(), longRunningByQueue.values().stream()))
                    .filter(d -> !d.isZero())
                    .mapToLong(Duration::toMillis)
                    .min()
                    .orElse(0);
            if (shortest > 0) {
                long every = Math.max(
                        10, Math.min(shortest, config.heartbeatInterval().toMillis()) / 2);
                Map<String, Duration> byKind = longRunningByKind;
                Map<String, Duration> byQueue = longRunningByQueue;
                scheduler.scheduleWithFixedDelay(
                        () -> keeper.checkLongRunning(longRunning, byKind, byQueue),
                        every,
                        every,
                        TimeUnit.MILLISECONDS);
            }
            long hb = config.heartbeatInterval().toMillis();
            scheduler.scheduleWithFixedDelay(keeper::heartbeat, hb, hb, TimeUnit.MILLISECONDS);
            registerWorker();
            scheduler.scheduleWithFixedDelay(this::registerWorker, hb, hb, TimeUnit.MILLISECONDS);
            ForeignTaskWatch watch =
                    new ForeignTaskWatch(jdbc, dialect, capabilities, config, unclaimableGrace, events);
            foreignTasks = watch;
            long watchEvery = watch.interval().toMillis();
            scheduler.scheduleWithFixedDelay(watch::check, watchEvery, watchEvery, TimeUnit.MILLISECONDS);
            long rescue = config.rescueInterval().toMillis();
            scheduler.scheduleWithFixedDelay(keeper::rescue, 0, rescue, TimeUnit.MILLISECONDS);
            QueueTableVacuum vacuum = new QueueTableVacuum(jdbc, dialect, locks, () -> closed);
            long vacuumEvery = config.vacuumInterval().toMillis();
            if (vacuum.applies() && vacuumEvery > 0) {
                scheduler.scheduleWithFixedDelay(
                        vacuum::run, Math.min(vacuumEvery, 1000), vacuumEvery, TimeUnit.MILLISECONDS);
                // Often, and from the start: a table that was empty when the claim was first planned
                // needs fresh statistics while its backlog grows, not a vacuum interval later.
                long statistics = QueueTableVacuum.STATISTICS_CHECK_MILLIS;
                scheduler.scheduleWithFixedDelay(
                        vacuum::checkStatistics, statistics, statistics, TimeUnit.MILLISECONDS);
            }
            long retentionEvery = retentionInterval.toMillis();
            if (retentionEvery > 0) {
                TaskRetention retention = newRetention();
                scheduler.scheduleWithFixedDelay(retention::run, retentionEvery, retentionEvery, TimeUnit.MILLISECONDS);
            }
            config.queues().forEach((queue, concurrency) -> {
                // SKIP LOCKED lets parallel loops claim without waiting on each other, so one loop's
                // round trips do not cap a queue with many slots.
                int loops = Math.max(1, Math.min(MAX_CLAIM_LOOPS, concurrency / SLOTS_PER_CLAIM_LOOP));
                List<QueueWorker> list = new ArrayList<>(loops);
                for (int i = 0; i < loops; i++) {
                    int slots = concurrency / loops + (i < concurrency % loops ? 1 : 0);
                    QueueWorker w = new QueueWorker(queue, slots, config, this::claim, executor, running, wiring);
                    list.add(w);
                    w.start();
                }
                workers.put(queue, List.copyOf(list));
            });
            listener = listen
                    ? dialect.listen(dataSource, this::wake, config.pollInterval())
                            .orElse(null)
                    : null;
            events.publish(
                    new WorkerEvent(WorkerEvent.Type.STARTED, config.workerId(), config.queues(), Instant.now()));
            log.info(
                    "dbtasks {} started on {}: queues {}, kinds {}, lease {}",
                    config.workerId(),
                    dialect.name(),
                    config.queues(),
                    handlers.kinds(),
                    config.lease());
        }
    }

    /**
     * Sets the run-once targets whose keys this engine runs again when their runner died, before
     * {@link #start()}; see {@code DbTasks.Builder#runOnceTarget}.
     *
     * @param targets by name; empty for none
     */
    public void runOnceTargets(Map<String, io.dbtasks.once.RunOnceTarget> targets) {
        this.guardRescue = targets.isEmpty()
                ? null
                : new io.dbtasks.internal.once.GuardRescue(jdbc, dialect, guards, targets, config.rescueInterval());
    }

    /**
     * Sets retention before {@link #start()}; see {@code DbTasks.Builder#retentionInterval}.
     *
     * @param interval how often to sweep; zero for never
     * @param tasks age by finished status; a zero age keeps that status
     * @param guards age of run-once guard rows; zero keeps them
     * @param inboxRecords age of inbox records; zero keeps them
     */
    public void retention(
            Duration interval, Map<io.dbtasks.TaskStatus, Duration> tasks, Duration guards, Duration inboxRecords) {
        this.retentionInterval = interval;
        this.taskRetention = Map.copyOf(tasks);
        this.guardRetention = guards;
        this.inboxRetention = inboxRecords;
    }

    /**
     * Sets long-running thresholds by kind and by queue before {@link #start()}; a kind's wins over
     * its queue's, which wins over the engine's; zero means never.
     *
     * @param byKind thresholds by kind
     * @param byQueue thresholds by queue
     */
    public void longRunningThresholds(Map<String, Duration> byKind, Map<String, Duration> byQueue) {
        this.longRunningByKind = Map.copyOf(byKind);
        this.longRunningByQueue = Map.copyOf(byQueue);
    }

    /**
     * Sets, before {@link #start()}, where the job targets this engine claims come from; see {@code
     * DbTasks.Builder#jobTargets}.
     *
     * @param targets the invoker's allow-listed targets, empty where it cannot list them
     */
    public void jobTargets(
            java.util.function.Supplier<java.util.Optional<? extends java.util.Collection<String>>> targets) {
        this.jobTargets = java.util.Objects.requireNonNull(targets, "targets");
        capabilities.refresh();
    }

    /**
     * Sets, before {@link #start()}, how long due tasks that no live engine of their queue can run
     * wait before they are failed; see {@link ForeignTaskWatch}.
     *
     * @param grace the grace period; zero never fails them
     */
    public void unclaimableGrace(Duration grace) {
        this.unclaimableGrace = grace;
    }

    /** @return the last check's due tasks this engine does not claim; empty before the first check */
    public List<io.dbtasks.ForeignTasks> foreignTasks() {
        ForeignTaskWatch w = foreignTasks;
        return w == null ? List.of() : w.snapshot();
    }

    /**
     * Runs one retention sweep now, on the calling thread, without the cluster lock; for tests and
     * operators.
     *
     * @return rows deleted (tasks, guards and inbox records)
     */
    public long sweepRetention() {
        return newRetention().sweep();
    }

    private TaskRetention newRetention() {
        return new TaskRetention(jdbc, dialect, locks, guards, inbox, taskRetention, guardRetention, inboxRetention);
    }

    public boolean stop(Duration timeout) {
        synchronized (lifecycle) {
            if (closed) {
                return true;
            }
            closed = true;
            schedulePoller.stop();
            if (guardRescue != null) {
                guardRescue.stop(timeout);
            }
            renewal.close();
            enqueueSignals.close(1000); // trailing wake-ups of tasks already committed
            if (!started || workers.isEmpty()) {
                if (started) {
                    events.publish(
                            new WorkerEvent(WorkerEvent.Type.STOPPED, config.workerId(), Map.of(), Instant.now()));
                }
                events.close(EVENT_DRAIN);
                return true;
            }
            for (List<QueueWorker> loops : workers.values()) {
                for (QueueWorker w : loops) {
                    try {
                        w.stop().forEach(w::handBackUnstarted);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
            closeListener();
            running.awaitEmpty(System.nanoTime() + timeout.toNanos());
            List<Execution> unfinished = running.snapshot();
            for (Execution e : unfinished) {
                e.handBack();
            }
            successes.stop(TimeUnit.SECONDS.toMillis(10)); // writes the successes still queued
            scheduler.shutdownNow();
            try {
                // A VACUUM or ANALYZE in flight (not interruptible) releases its lock while the pool is
                // still open, if it ends soon; otherwise its short lease frees the lock by itself.
                if (!scheduler.awaitTermination(SCHEDULER_DRAIN_SECONDS, TimeUnit.SECONDS)) {
                    log.info(
                            "dbtasks {}: background work still running after {} s; leaving it",
                            config.workerId(),
                            SCHEDULER_DRAIN_SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (config.executor() == null) {
                executor.shutdownNow();
            }
            try {
                queueControl.unregisterWorker(config.workerId());
            } catch (RuntimeException e) {
                log.warn("Removing the worker row of {} failed; it ages out", config.workerId(), e);
            }
            log.info("dbtasks {} stopped; {} unfinished task(s) handed back", config.workerId(), unfinished.size());
            events.publish(
                    new WorkerEvent(WorkerEvent.Type.STOPPED, config.workerId(), config.queues(), Instant.now()));
            events.close(EVENT_DRAIN);
            return unfinished.isEmpty();
        }
    }

    private void closeListener() {
        if (listener != null) {
            try {
                listener.close();
            } catch (Exception e) {
                log.warn("Closing the notification listener failed", e);
            }
        }
    }

    public boolean isRunning() {
        return started && !closed;
    }

    public int runningCount() {
        return running.size();
    }

    /** Claims for a queue unless it is paused (see {@link QueueControl}). */
    private List<TaskRows.Claimed> claim(String queue, int limit) {
        if (queueControl.isPaused(queue)) {
            return List.of();
        }
        long call = claimHealth.begin();
        Throwable error = null;
        try {
            return leases.claim(queue, limit);
        } catch (RuntimeException | Error e) {
            error = e;
            throw e;
        } finally {
            claimHealth.end(call, error);
        }
    }

    private void registerWorker() {
        try {
            capabilities.refresh();
            queueControl.registerWorker(
                    config.workerId(),
                    config.queues(),
                    capabilities.advertisedKinds(),
                    capabilities.advertisedJobTargets());
        } catch (RuntimeException e) {
            log.warn(
                    "Writing the worker row of {} failed; will retry in {}",
                    config.workerId(),
                    config.heartbeatInterval(),
                    e);
        }
    }

    /**
     * A retry was written: wakes its queue's claim loops when it is due, if that comes before their
     * next poll (a retry with no backoff at once), so a short backoff is not stretched to the poll
     * interval.
     */
    private void retryWritten(String queue, Duration delay) {
        if (delay.compareTo(config.pollInterval()) >= 0) {
            return;
        }
        if (delay.isZero() || delay.isNegative()) {
            wake(queue);
            return;
        }
        // Retries due within one bucket share one wake-up at its end: at most one timer task per
        // queue per RETRY_WAKE_BUCKET_NANOS, however many retries a busy queue writes.
        long bucket = Math.floorDiv(System.nanoTime() + delay.toNanos(), RETRY_WAKE_BUCKET_NANOS) + 1;
        java.util.concurrent.atomic.AtomicLong last =
                retryWakes.computeIfAbsent(queue, q -> new java.util.concurrent.atomic.AtomicLong(Long.MIN_VALUE));
        if (last.getAndSet(bucket) == bucket) {
            return; // this bucket's wake-up is scheduled already
        }
        long wakeIn = bucket * RETRY_WAKE_BUCKET_NANOS - System.nanoTime();
        try {
            scheduler.schedule(() -> wake(queue), Math.max(0, wakeIn), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // stopping: nothing left to wake
        }
    }

    private void wake(String queue) {
        for (QueueWorker w : workers.getOrDefault(queue, List.of())) {
            w.wakeUp();
        }
    }

    private static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** @return the engine's database health snapshot; see {@link io.dbtasks.DbTasksHealth} */
    public io.dbtasks.DbTasksHealth health() {
        io.dbtasks.DbTasksHealth db = jdbc.health();
        int loops = 0;
        int alive = 0;
        long oldest = Long.MAX_VALUE;
        for (List<QueueWorker> list : workers.values()) {
            for (QueueWorker w : list) {
                loops++;
                if (w.alive()) {
                    alive++;
                }
                oldest = Math.min(oldest, w.lastLoopMillis());
            }
        }
        LeaseKeeper k = keeper;
        AutoCloseable l = listener;
        return new io.dbtasks.DbTasksHealth(
                db.lastSuccessAt(),
                db.consecutiveFailures(),
                db.lastFailureAt(),
                db.lastFailure(),
                isRunning() && !config.queues().isEmpty(),
                loops,
                alive,
                loops == 0 || oldest == 0 ? null : Instant.ofEpochMilli(oldest),
                k == null ? null : k.lastRescueAt(),
                l instanceof java.util.function.BooleanSupplier up && isRunning() ? up.getAsBoolean() : null,
                unavailable());
    }

    /** @return why enqueueing or (with workers running) claiming does not work now, or null */
    private String unavailable() {
        String enqueue = enqueueHealth.problem();
        String claim = isRunning() && !config.queues().isEmpty() ? claimHealth.problem() : null;
        if (enqueue == null) {
            return claim;
        }
        return claim == null ? enqueue : claim + "; " + enqueue;
    }

    /** @return the queues worked and their concurrency; empty for a producer-only engine */
    public Map<String, Integer> queues() {
        return config.queues();
    }

    /** @return the engine's worker id */
    public String workerId() {
        return config.workerId();
    }

    /** @return how long {@code DbTasks.close()} waits for running tasks */
    public Duration shutdownTimeout() {
        return config.shutdownTimeout();
    }

    public Dialect dialect() {
        return dialect;
    }

    /** @return the engine's connections, for the capabilities built beside it (jobs, batches) */
    public Jdbc jdbc() {
        return jdbc;
    }

    public HandlerRegistry handlers() {
        return handlers;
    }

    public Enqueuer enqueuer() {
        return enqueuer;
    }

    public TaskQueries queries() {
        return queries;
    }

    public TaskOperations operations() {
        return operations;
    }

    public LeaseLocks locks() {
        return locks;
    }

    public RunOnceGuards guards() {
        return guards;
    }

    public Inbox inbox() {
        return inbox;
    }

    /** @return the schedules API; see {@link io.dbtasks.schedule.Schedules} */
    public Schedules schedules() {
        return schedules;
    }

    /** @return the queue pause store */
    public QueueControl queueControl() {
        return queueControl;
    }

    /** @return events dropped because a listener's queue was full; see {@link Events} */
    public long droppedEvents() {
        return events.dropped();
    }

    /** @return transactions rolled back as deadlock victims, see {@link Jdbc#deadlocks()} */
    public long deadlocks() {
        return jdbc.deadlocks();
    }
}
