package io.dbtasks.internal;

import io.dbtasks.DbTasksException;
import io.dbtasks.batch.Batches;
import io.dbtasks.event.WorkerEvent;
import io.dbtasks.inbox.Inbox;
import io.dbtasks.internal.batch.JdbcBatches;
import io.dbtasks.internal.claim.QueueWorker;
import io.dbtasks.internal.completion.Attempts;
import io.dbtasks.internal.completion.Completions;
import io.dbtasks.internal.completion.Dependents;
import io.dbtasks.internal.completion.OutcomeBatcher;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.dialect.Dialects;
import io.dbtasks.internal.dialect.GaleraSchema;
import io.dbtasks.internal.dialect.MariaDbDialect;
import io.dbtasks.internal.enqueue.EnqueueSignals;
import io.dbtasks.internal.enqueue.Enqueuer;
import io.dbtasks.internal.execution.Completer;
import io.dbtasks.internal.execution.Execution;
import io.dbtasks.internal.execution.HandlerRegistry;
import io.dbtasks.internal.execution.LeaseKeeper;
import io.dbtasks.internal.execution.RunningSet;
import io.dbtasks.internal.inbox.JdbcInbox;
import io.dbtasks.internal.job.JdbcJobDefinitions;
import io.dbtasks.internal.job.JobCronHandler;
import io.dbtasks.internal.lease.ForeignTaskWatch;
import io.dbtasks.internal.lease.Leases;
import io.dbtasks.internal.limit.JdbcLimits;
import io.dbtasks.internal.lock.JdbcLeaseLocks;
import io.dbtasks.internal.maintenance.HistoryPartitions;
import io.dbtasks.internal.maintenance.HistoryRollup;
import io.dbtasks.internal.maintenance.QueueTableVacuum;
import io.dbtasks.internal.maintenance.TaskRetention;
import io.dbtasks.internal.once.GuardRescue;
import io.dbtasks.internal.once.JdbcRunOnceGuards;
import io.dbtasks.internal.query.QueueControl;
import io.dbtasks.internal.query.TaskOperations;
import io.dbtasks.internal.query.TaskQueries;
import io.dbtasks.internal.query.TaskRows;
import io.dbtasks.internal.schedule.JdbcSchedules;
import io.dbtasks.internal.schedule.ScheduleConfig;
import io.dbtasks.internal.schedule.SchedulePoller;
import io.dbtasks.internal.support.Capabilities;
import io.dbtasks.internal.support.EngineConfig;
import io.dbtasks.internal.support.Events;
import io.dbtasks.internal.support.HealthTracker;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.internal.support.PathHealth;
import io.dbtasks.internal.workflow.JdbcWorkflows;
import io.dbtasks.job.JobDefinitions;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

/**
 * The one place that wires an engine: its constructor builds every part from the immutable {@link
 * EngineSettings}, in dependency order, and nothing is set on it afterwards. The background parts
 * (one or more claim loops per queue ({@link QueueWorker}), the outcome writer, heartbeats, rescue
 * and the periodic sweeps on a small scheduler ({@link LeaseKeeper}), the schedule poller, the
 * worker row) share one {@link BackgroundService} contract: {@link #start} starts them in one list,
 * in order, and {@link #stop} stops them in the reverse order. It holds no task logic: its parts
 * never reach back into it except through the narrow callbacks it hands them (wake a queue, run a
 * job for a schedule slot), and only {@code DbTasks} calls it.
 */
public final class Engine {
    private static final Logger log = LoggerFactory.getLogger(Engine.class);

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

    /** How long a stop waits for the outcome writer to write the successes still queued. */
    private static final long OUTCOME_DRAIN_MILLIS = TimeUnit.SECONDS.toMillis(10);

    /** Retries due within this span share one wake-up, at its end. */
    private static final long RETRY_WAKE_BUCKET_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private final EngineConfig config;
    private final ScheduleConfig scheduleConfig;
    private final DataSource dataSource;
    private final Jdbc jdbc;
    private final Dialect dialect;
    private final HandlerRegistry handlers;
    private final Events events;
    private final EnqueueSignals enqueueSignals;
    /** Whether enqueueing and claiming work, apart from other units of work; see {@link PathHealth}. */
    private final PathHealth enqueueHealth = new PathHealth("an enqueue", PathHealth.DEFAULT_HANG);

    private final PathHealth claimHealth = new PathHealth("a claim", PathHealth.DEFAULT_HANG);
    private final Enqueuer enqueuer;
    private final TaskQueries queries;
    private final TaskOperations operations;
    /** What this engine can run; its claims take nothing else. */
    private final Capabilities capabilities;

    private final Leases leases;
    private final Completions completions;
    private final Renewal renewal = new Renewal("dbtasks-renewal-");
    private final LeaseLocks locks;
    private final JdbcRunOnceGuards guards;
    private final Inbox inbox;
    private final SchedulePoller schedulePoller;
    private final JdbcSchedules schedules;
    private final JdbcJobDefinitions jobs;
    private final Batches batches;
    private final io.dbtasks.workflow.Workflows workflows;
    private final QueueControl queueControl;
    private final JdbcLimits limits;
    private final TaskRetention retention;
    private final HistoryRollup historyRollup;

    private final Map<String, List<QueueWorker>> workers = new ConcurrentHashMap<>();
    private final RunningSet running = new RunningSet();
    /** Per queue, the last time bucket a retry's wake-up was scheduled for (see {@link #retryWritten}). */
    private final Map<String, AtomicLong> retryWakes = new ConcurrentHashMap<>();

    /** The handler threads: the caller's executor or the engine's own pool; null without workers. */
    private final ExecutorService executor;
    /** Heartbeats, timeouts, rescue and the periodic sweeps; null without workers. */
    private final ScheduledExecutorService scheduler;
    /** Null without workers. */
    private final LeaseKeeper keeper;
    /** Null without workers. */
    private final ForeignTaskWatch foreignTasks;

    /** The background parts in start order; {@link #stop} stops them in reverse. */
    private final List<BackgroundService> services;

    private final Object lifecycle = new Object();
    private volatile boolean started;
    private volatile boolean closed;
    private volatile AutoCloseable listener;
    /** Whether to LISTEN for other instances' enqueues; not behind a declared transaction pooler. */
    private final boolean listen;

    /**
     * Wires every part of an engine from its settings, in dependency order; starts no thread.
     *
     * @param connections the connections, behind a pooler check
     * @param settings the validated settings
     * @param registries builds the handler registry, given how a job definition runs for a schedule slot
     * @param dialect the detected dialect
     * @param mapper writes and reads payloads of jobs and batches
     * @param sessionSetup a statement run on each new connection, or null
     */
    private Engine(
            DataSource connections,
            EngineSettings settings,
            Function<JobCronHandler.SlotRunner, HandlerRegistry> registries,
            Dialect dialect,
            JsonMapper mapper,
            String sessionSetup) {
        this.config = settings.config();
        this.scheduleConfig = settings.schedules();
        this.dialect = dialect;
        this.dataSource = connections;
        this.listen = !Boolean.TRUE.equals(settings.transactionPooling());
        this.handlers = registries.apply(this::runJobForSlot);
        this.jdbc = new Jdbc(connections, config.statementTimeout(), new HealthTracker(), sessionSetup);
        this.events = new Events(config.workerId(), config.listeners());
        this.events.start(); // producer-only engines publish ENQUEUED too
        Attempts attempts = new Attempts(dialect);
        this.enqueueSignals = new EnqueueSignals(jdbc, dialect, config.enqueueSignalInterval());
        this.enqueuer =
                new Enqueuer(jdbc, dialect, handlers, config, this::wake, events, enqueueSignals, enqueueHealth);
        this.queries = new TaskQueries(jdbc, dialect);
        Dependents dependents = new Dependents(dialect, this::wake);
        this.operations = new TaskOperations(jdbc, dialect, queries, this::wake, dependents);
        this.capabilities =
                new Capabilities(handlers.kinds(), io.dbtasks.job.JobDefinitions.KIND, settings.jobTargets());
        this.limits = new JdbcLimits(jdbc, dialect);
        this.leases = new Leases(
                jdbc, dialect, attempts, config, events, capabilities::claimable, limits::forQueue, dependents);
        JdbcWorkflows workflowStore = new JdbcWorkflows(jdbc, dialect, enqueuer, operations);
        this.workflows = workflowStore;
        this.completions = new Completions(jdbc, dialect, attempts, dependents, workflowStore::addSteps);
        this.locks = new JdbcLeaseLocks(jdbc, dialect, config.workerId(), renewal);
        this.guards = new JdbcRunOnceGuards(jdbc, dialect, config.workerId(), renewal);
        this.inbox = new JdbcInbox(jdbc, dialect);
        this.queueControl = new QueueControl(
                jdbc, dialect, Math.min(1000, config.pollInterval().toMillis()), this::wake);
        this.schedulePoller = new SchedulePoller(jdbc, dialect, enqueuer, scheduleConfig, handlers.kinds());
        this.schedules = new JdbcSchedules(jdbc, dialect, handlers, scheduleConfig.clock(), schedulePoller);
        this.jobs = new JdbcJobDefinitions(jdbc, dialect, mapper, enqueuer::enqueue, schedules);
        this.batches =
                new JdbcBatches(jdbc, dialect, mapper, enqueuer::enqueue, id -> operations.retry(id, 1), workflows);
        this.retention = new TaskRetention(
                jdbc,
                dialect,
                locks,
                guards,
                inbox,
                settings.taskRetention(),
                settings.queueRetention(),
                settings.guardRetention(),
                settings.inboxRetention());

        this.historyRollup = new HistoryRollup(jdbc, dialect, locks);

        List<BackgroundService> parts = new ArrayList<>();
        if (config.queues().isEmpty()) {
            this.executor = null;
            this.scheduler = null;
            this.keeper = null;
            this.foreignTasks = null;
        } else {
            int threads = config.queues().values().stream()
                    .mapToInt(Integer::intValue)
                    .sum();
            this.executor = config.executor() != null
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
            this.scheduler = s;
            OutcomeBatcher successes = new OutcomeBatcher(completions, this::retryWritten, threads);
            Execution.Wiring wiring = new Execution.Wiring(
                    handlers,
                    new Completer(jdbc, completions, leases, successes),
                    scheduler,
                    events,
                    config::isNonRetryable,
                    config.random());
            this.keeper =
                    new LeaseKeeper(running, leases, config.heartbeatInterval(), config.rescueInterval(), () -> closed);
            this.foreignTasks = new ForeignTaskWatch(
                    jdbc, dialect, capabilities, config, settings.unclaimableGrace(), events, dependents);
            // Stopped in reverse: the worker row goes last, the claim loops first.
            parts.add(workerRow());
            parts.add(handlerPool());
            parts.add(schedulerPool());
            parts.add(BackgroundService.of("outcome writer", successes::start, timeout -> {
                successes.stop(OUTCOME_DRAIN_MILLIS); // writes the successes still queued
                return true;
            }));
            parts.add(leaseKeeper(settings));
            parts.add(periodic(
                    "foreign task watch",
                    foreignTasks::check,
                    foreignTasks.interval().toMillis()));
            parts.add(rescue());
            QueueTableVacuum vacuum = new QueueTableVacuum(jdbc, dialect, locks, () -> closed);
            if (vacuum.applies() && config.vacuumInterval().toMillis() > 0) {
                parts.add(vacuum(vacuum));
            }
            parts.add(periodic("history counts", historyRollup::run, HistoryRollup.INTERVAL.toMillis()));
            HistoryPartitions partitions = new HistoryPartitions(jdbc, dialect);
            parts.add(BackgroundService.of(
                    "history partitions",
                    () -> scheduler.scheduleWithFixedDelay(
                            partitions::run, 0, HistoryPartitions.INTERVAL.toMillis(), TimeUnit.MILLISECONDS),
                    timeout -> true));
            long retentionEvery = settings.retentionInterval().toMillis();
            if (retentionEvery > 0) {
                parts.add(periodic("retention", retention::run, retentionEvery));
            }
            parts.add(BackgroundService.of("running tasks", () -> {}, this::handBackRunning));
            parts.add(notificationListener());
            parts.add(claimLoops(wiring));
        }
        parts.add(BackgroundService.closing(
                "enqueue signals", () -> enqueueSignals.close(1000))); // trailing wake-ups of tasks committed
        parts.add(BackgroundService.closing("lock renewal", renewal::close));
        if (!settings.runOnceTargets().isEmpty()) {
            GuardRescue guardRescue =
                    new GuardRescue(jdbc, dialect, guards, settings.runOnceTargets(), config.rescueInterval());
            parts.add(BackgroundService.of("run-once rescue", () -> guardRescue.start(config.workerId()), timeout -> {
                guardRescue.stop(timeout);
                return true;
            }));
        }
        if (scheduleConfig.polling()) {
            parts.add(BackgroundService.of("schedule poller", () -> schedulePoller.start(config.workerId()), t -> {
                schedulePoller.stop();
                return true;
            }));
        } else {
            parts.add(BackgroundService.closing("schedule poller", schedulePoller::stop));
        }
        this.services = List.copyOf(parts);
    }

    /**
     * Detects the dialect, migrates if asked, and wires an engine that is not yet started.
     *
     * @param dataSource the application's database
     * @param settings the validated settings
     * @param registries builds the handler registry, given how a job definition runs for a schedule slot
     * @param mapper writes and reads payloads of jobs and batches
     * @return the engine, not started
     * @throws DbTasksException if the database is not supported, cannot be reached or the migration fails
     */
    public static Engine create(
            DataSource dataSource,
            EngineSettings settings,
            Function<JobCronHandler.SlotRunner, HandlerRegistry> registries,
            JsonMapper mapper) {
        Boolean transactionPooling = settings.transactionPooling();
        Dialect dialect = Dialects.detect(dataSource);
        DataSource connections;
        try {
            connections = dialect.connections(dataSource, transactionPooling);
        } catch (java.sql.SQLException e) {
            throw Jdbc.failure("Checking for a connection pooler", e);
        }
        if (!settings.migrate() && dialect instanceof MariaDbDialect m && m.galera()) {
            GaleraSchema.requireTokenFunction(connections);
        }
        if (settings.migrate()) {
            migrate(connections, dialect);
        }
        // Frozen claims and settles give their rows back after the lease; not behind a pooler, where
        // a session setting would reach other clients' sessions.
        String sessionSetup = Boolean.TRUE.equals(transactionPooling) || dialect.behindPooler(connections)
                ? null
                : dialect.idleInTransactionLimit(settings.config().lease()).orElse(null);
        return new Engine(connections, settings, registries, dialect, mapper, sessionSetup);
    }

    /** Applies the dialect's migrations with dbtasks' own history table. */
    public static void migrate(DataSource dataSource, Dialect dialect) {
        try {
            // On a Galera cluster: the first script's sequence NOCACHE, and the token function (GaleraSchema)
            boolean mariadb = dialect.name().equals("mariadb");
            boolean firstRun = mariadb && GaleraSchema.prepare(dataSource);
            Flyway.configure(Engine.class.getClassLoader())
                    .dataSource(dataSource)
                    .table("dbtasks_schema_history")
                    .locations("classpath:io/dbtasks/migration/" + dialect.name())
                    .baselineOnMigrate(true)
                    .baselineVersion(firstRun ? "1" : "0")
                    .load()
                    .migrate();
            if (mariadb) {
                GaleraSchema.settle(dataSource);
            }
        } catch (java.sql.SQLException e) {
            throw Jdbc.failure("Migrating the dbtasks schema (" + dialect.name() + ") on a Galera cluster", e);
        } catch (RuntimeException e) {
            throw new DbTasksException(
                    "Migrating the dbtasks schema (" + dialect.name() + ") failed: "
                            + e.getMessage() + "; check that the database user may create tables, or migrate"
                            + " io/dbtasks/migration/" + dialect.name() + " yourself and build with migrate(false)",
                    e);
        }
    }

    /**
     * Saves the declared schedules, then starts the background parts in order. Idempotent.
     *
     * @throws IllegalStateException if this engine was stopped
     */
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
            for (BackgroundService service : services) {
                service.start();
            }
            events.publish(
                    new WorkerEvent(WorkerEvent.Type.STARTED, config.workerId(), config.queues(), Instant.now()));
            if (config.queues().isEmpty()) {
                log.info("dbtasks {} started without workers (producer only)", config.workerId());
            } else {
                log.info(
                        "dbtasks {} started on {}: queues {}, kinds {}, lease {}",
                        config.workerId(),
                        dialect.name(),
                        config.queues(),
                        handlers.kinds(),
                        config.lease());
            }
        }
    }

    /**
     * Stops the background parts in the reverse of their start order: the schedule poller first, then
     * the claim loops, the running tasks (waited for, then handed back), the outcome writer, the
     * periodic work and the worker row last. An engine never started only releases what it holds.
     * Idempotent.
     *
     * @param timeout how long to wait for running tasks
     * @return whether every running task finished
     */
    public boolean stop(Duration timeout) {
        synchronized (lifecycle) {
            if (closed) {
                return true;
            }
            closed = true;
            boolean finished = true;
            for (int i = services.size() - 1; i >= 0; i--) {
                BackgroundService service = services.get(i);
                try {
                    finished &= service.stop(timeout);
                } catch (RuntimeException e) {
                    log.warn("dbtasks {}: stopping the {} failed", config.workerId(), service.name(), e);
                }
            }
            if (started) {
                events.publish(
                        new WorkerEvent(WorkerEvent.Type.STOPPED, config.workerId(), config.queues(), Instant.now()));
            }
            events.close(EVENT_DRAIN);
            return finished;
        }
    }

    /** The worker row: written at start and every heartbeat, removed at stop if it was written. */
    private BackgroundService workerRow() {
        long hb = config.heartbeatInterval().toMillis();
        return BackgroundService.of(
                "worker row",
                () -> {
                    registerWorker();
                    scheduler.scheduleWithFixedDelay(this::registerWorker, hb, hb, TimeUnit.MILLISECONDS);
                },
                timeout -> {
                    if (started) {
                        try {
                            queueControl.unregisterWorker(config.workerId());
                        } catch (RuntimeException e) {
                            log.warn("Removing the worker row of {} failed; it ages out", config.workerId(), e);
                        }
                    }
                    return true;
                });
    }

    /** The handler threads; an executor given by the caller is the caller's to shut down. */
    private BackgroundService handlerPool() {
        return BackgroundService.closing("handler threads", () -> {
            if (config.executor() == null) {
                executor.shutdownNow();
            }
        });
    }

    /** The scheduler of the periodic parts; stopping it cancels them and waits for a run in flight. */
    private BackgroundService schedulerPool() {
        return BackgroundService.closing("background scheduler", () -> {
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
        });
    }

    /** Heartbeats and, with a threshold set anywhere, long-running checks. */
    private BackgroundService leaseKeeper(EngineSettings settings) {
        return BackgroundService.of(
                "lease keeper",
                () -> {
                    Duration longRunning = config.longRunningThreshold();
                    Map<String, Duration> byKind = settings.longRunningByKind();
                    Map<String, Duration> byQueue = settings.longRunningByQueue();
                    long shortest = Stream.concat(
                                    Stream.of(longRunning),
                                    Stream.concat(byKind.values().stream(), byQueue.values().stream()))
                            .filter(d -> !d.isZero())
                            .mapToLong(Duration::toMillis)
                            .min()
                            .orElse(0);
                    if (shortest > 0) {
                        long every = Math.max(
                                10,
                                Math.min(shortest, config.heartbeatInterval().toMillis()) / 2);
                        scheduler.scheduleWithFixedDelay(
                                () -> keeper.checkLongRunning(longRunning, byKind, byQueue),
                                every,
                                every,
                                TimeUnit.MILLISECONDS);
                    }
                    long hb = config.heartbeatInterval().toMillis();
                    scheduler.scheduleWithFixedDelay(keeper::heartbeat, hb, hb, TimeUnit.MILLISECONDS);
                },
                timeout -> true); // cancelled with the scheduler
    }

    /** Rescue of expired leases, at once and then every rescue interval. */
    private BackgroundService rescue() {
        long every = config.rescueInterval().toMillis();
        return BackgroundService.of(
                "lease rescue",
                () -> scheduler.scheduleWithFixedDelay(keeper::rescue, 0, every, TimeUnit.MILLISECONDS),
                timeout -> true); // cancelled with the scheduler
    }

    /** VACUUM of the task table, and its statistics checked often and from the start. */
    private BackgroundService vacuum(QueueTableVacuum vacuum) {
        long every = config.vacuumInterval().toMillis();
        return BackgroundService.of(
                "queue table vacuum",
                () -> {
                    scheduler.scheduleWithFixedDelay(vacuum::run, Math.min(every, 1000), every, TimeUnit.MILLISECONDS);
                    // Often, and from the start: a table that was empty when the claim was first planned
                    // needs fresh statistics while its backlog grows, not a vacuum interval later.
                    long statistics = QueueTableVacuum.STATISTICS_CHECK_MILLIS;
                    scheduler.scheduleWithFixedDelay(
                            vacuum::checkStatistics, statistics, statistics, TimeUnit.MILLISECONDS);
                },
                timeout -> true); // cancelled with the scheduler
    }

    /** A task on the scheduler, first after one interval; cancelled with the scheduler. */
    private BackgroundService periodic(String name, Runnable task, long everyMillis) {
        return BackgroundService.of(
                name,
                () -> scheduler.scheduleWithFixedDelay(task, everyMillis, everyMillis, TimeUnit.MILLISECONDS),
                timeout -> true);
    }

    /** Waits up to {@code timeout} for the running tasks, then hands back those still running. */
    private boolean handBackRunning(Duration timeout) {
        running.awaitEmpty(System.nanoTime() + timeout.toNanos());
        List<Execution> unfinished = running.snapshot();
        for (Execution e : unfinished) {
            e.handBack();
        }
        if (started) {
            log.info("dbtasks {} stopped; {} unfinished task(s) handed back", config.workerId(), unfinished.size());
        }
        return unfinished.isEmpty();
    }

    /** The LISTEN connection that wakes the claim loops on other instances' enqueues. */
    private BackgroundService notificationListener() {
        return BackgroundService.of(
                "notification listener",
                () -> listener = listen
                        ? dialect.listen(dataSource, this::wake, config.pollInterval())
                                .orElse(null)
                        : null,
                timeout -> {
                    AutoCloseable l = listener;
                    if (l != null) {
                        try {
                            l.close();
                        } catch (Exception e) {
                            log.warn("Closing the notification listener failed", e);
                        }
                    }
                    return true;
                });
    }

    /** One or more claim loops per queue; stopping them hands back the tasks claimed but not started. */
    private BackgroundService claimLoops(Execution.Wiring wiring) {
        return BackgroundService.of(
                "claim loops",
                () -> config.queues().forEach((queue, concurrency) -> {
                    // SKIP LOCKED lets parallel loops claim without waiting on each other, so one loop's
                    // round trips do not cap a queue with many slots.
                    int loops = Math.max(1, Math.min(MAX_CLAIM_LOOPS, concurrency / SLOTS_PER_CLAIM_LOOP));
                    List<QueueWorker> list = new ArrayList<>(loops);
                    for (int i = 0; i < loops; i++) {
                        int slots = concurrency / loops + (i < concurrency % loops ? 1 : 0);
                        QueueWorker w = new QueueWorker(
                                queue, slots, config, this::claim, executor, running, wiring, leases::heldBackMillis);
                        list.add(w);
                        w.start();
                    }
                    workers.put(queue, List.copyOf(list));
                }),
                timeout -> {
                    for (List<QueueWorker> loops : workers.values()) {
                        for (QueueWorker w : loops) {
                            try {
                                w.stop().forEach(w::handBackUnstarted);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    }
                    return true;
                });
    }

    /** @return the last check's due tasks this engine does not claim; empty before the first check */
    public List<io.dbtasks.ForeignTasks> foreignTasks() {
        return foreignTasks == null ? List.of() : foreignTasks.snapshot();
    }

    /**
     * Runs one retention sweep now, on the calling thread, without the cluster lock; for tests and
     * operators.
     *
     * @return rows deleted (tasks, guards and inbox records)
     */
    public long sweepRetention() {
        return retention.sweep();
    }

    /**
     * Counts closed hours of finished tasks now, on the calling thread, without the cluster lock;
     * for tests and operators.
     *
     * @param maxHours the most hours to count
     * @return hours counted
     */
    public int countHistory(int maxHours) {
        return historyRollup.rollUp(maxHours);
    }

    /** Runs a job definition for a schedule slot in the slot task's transaction. */
    private void runJobForSlot(java.sql.Connection transaction, String code) throws java.sql.SQLException {
        jobs.runForSlot(transaction, code);
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
        AtomicLong last = retryWakes.computeIfAbsent(queue, q -> new AtomicLong(Long.MIN_VALUE));
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

    /** @return the dialect detected on the engine's database */
    public Dialect dialect() {
        return dialect;
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

    /** @return the job definitions; see {@link io.dbtasks.job.JobDefinitions} */
    public JobDefinitions jobs() {
        return jobs;
    }

    /** @return the chunked batches; see {@link io.dbtasks.batch.Batches} */
    public Batches batches() {
        return batches;
    }

    /** @return the concurrency limits; see {@link io.dbtasks.limit.Limits} */
    public io.dbtasks.limit.Limits limits() {
        return limits;
    }

    /** @return the workflows; see {@link io.dbtasks.workflow.Workflows} */
    public io.dbtasks.workflow.Workflows workflows() {
        return workflows;
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
