package io.dbtasks.internal;

import io.dbtasks.DbTasksException;
import io.dbtasks.DbTasksHealth;
import io.dbtasks.inbox.Inbox;
import io.dbtasks.internal.enqueue.Enqueuer;
import io.dbtasks.internal.query.QueueControl;
import io.dbtasks.internal.query.TaskOperations;
import io.dbtasks.internal.query.TaskQueries;
import io.dbtasks.internal.support.EngineConfig;
import io.dbtasks.lock.LeaseLocks;
import io.dbtasks.once.RunOnceGuards;
import io.dbtasks.schedule.Schedules;
import java.net.ConnectException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@link Engine} that may be built before its database can be reached, so that an application
 * started during an outage starts working when the database returns instead of failing to start.
 *
 * <p>Creating the engine connects: it detects the dialect, checks for a pooler and migrates the
 * schema. {@link #create} tries once; when the database cannot be reached (a connection refused or
 * timed out, SQLState class 08, a server starting or shutting down) it returns without an engine,
 * and every call that needs one tries again and, while the database is still away, fails with a
 * {@link DbTasksException} that says so (after at most the DataSource's own connection timeout). A
 * {@link #start} while there is no engine starts a thread that tries every {@value #RETRY_MILLIS}
 * ms and starts the workers once the engine is created. Any other failure (an unsupported database,
 * a migration refused) is thrown as before. Meanwhile {@link #health} is DOWN with the reason.
 *
 * <p>Thread-safe. Creation, start and stop are serialized on one lock; calls on a created engine
 * take no lock.
 */
public final class DeferredEngine {
    private static final Logger log = LoggerFactory.getLogger(DeferredEngine.class);
    /** The pause between two attempts to reach the database of an engine started before it. */
    static final long RETRY_MILLIS = 250;
    /** How often, at most, a failing attempt is logged at WARN (the others at DEBUG). */
    private static final long LOG_EVERY_NANOS = Duration.ofSeconds(30).toNanos();

    private final Supplier<Engine> factory;
    private final EngineConfig config;
    private final Object lock = new Object();
    private volatile Engine engine;
    private volatile boolean startRequested;
    private volatile boolean closed;
    private Thread starter; // guarded by lock

    // written under lock; volatile so health() reads them without waiting for a connection attempt
    private volatile int failures;
    private volatile Instant lastFailureAt;
    private volatile String lastFailure;
    private long lastLoggedNanos;

    private DeferredEngine(Supplier<Engine> factory, EngineConfig config) {
        this.factory = factory;
        this.config = config;
    }

    /**
     * Creates the engine now if the database can be reached, else defers it.
     *
     * @param factory connects, migrates and wires the engine (not started); throws {@link
     *     DbTasksException} when it cannot
     * @param config the engine's settings, for what is known before the database is reached
     * @return the engine, created or waiting for its database
     * @throws DbTasksException if creating the engine failed for another reason than an unreachable
     *     database (an unsupported database, a failed migration)
     */
    public static DeferredEngine create(Supplier<Engine> factory, EngineConfig config) {
        DeferredEngine deferred = new DeferredEngine(factory, config);
        try {
            deferred.ready();
        } catch (DatabaseAway away) {
            log.warn(
                    "dbtasks {}: the database cannot be reached ({}); building without it. Enqueues fail until"
                            + " it returns; started workers wait for it, then the schema is migrated and they run",
                    config.workerId(),
                    away.getCause().getMessage());
        }
        return deferred;
    }

    /**
     * @return the engine, created now if it was not yet
     * @throws DbTasksException if the database still cannot be reached, or creating the engine failed
     * @throws IllegalStateException if this engine was stopped before it reached its database
     */
    public Engine ready() {
        Engine e = engine;
        if (e != null) {
            return e;
        }
        synchronized (lock) {
            if (engine != null) {
                return engine;
            }
            if (closed) {
                throw new IllegalStateException("This DbTasks was stopped; build a new one");
            }
            try {
                engine = factory.get();
                if (failures > 0) {
                    log.info(
                            "dbtasks {}: reached the database after {} failed attempt(s)", config.workerId(), failures);
                }
                return engine;
            } catch (RuntimeException failure) {
                failures++;
                lastFailureAt = Instant.now();
                lastFailure = failure.getMessage();
                if (!unreachable(failure)) {
                    throw failure;
                }
                throw new DatabaseAway(failure);
            }
        }
    }

    /** The database cannot be reached (yet): the message says what to expect. */
    private static final class DatabaseAway extends DbTasksException {
        private static final long serialVersionUID = 1L;

        DatabaseAway(RuntimeException cause) {
            super(
                    "dbtasks has not reached its database yet: " + cause.getMessage()
                            + "; it connects, migrates the schema and starts its workers once the database"
                            + " accepts connections",
                    cause);
        }
    }

    /**
     * @return whether {@code failure} says the database could not be reached, as opposed to a
     *     refusal from a database that answered
     */
    static boolean unreachable(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SQLTransientConnectionException
                    || t instanceof SQLNonTransientConnectionException
                    || t instanceof SQLRecoverableException
                    || t instanceof ConnectException
                    || t instanceof java.net.SocketTimeoutException
                    || t instanceof java.net.UnknownHostException) {
                return true;
            }
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                String state = sql.getSQLState();
                // 08: connection exception; 57P01-57P03: the server shuts down or is starting up
                if (state.startsWith("08") || state.startsWith("57P0")) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Starts the workers now, or once the database is reached.
     *
     * @throws IllegalStateException if this engine was stopped
     */
    public void start() {
        Engine e;
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("This DbTasks was stopped; build a new one");
            }
            e = engine;
            if (e == null) {
                startRequested = true;
                if (starter == null) {
                    starter = new Thread(this::startWhenReached, "dbtasks-startup");
                    starter.setDaemon(true);
                    starter.start();
                }
                return;
            }
        }
        e.start();
    }

    /** The startup thread: tries to create the engine until it can, then starts it. */
    private void startWhenReached() {
        while (!closed) {
            try {
                Engine e = ready();
                synchronized (lock) {
                    if (!closed) {
                        e.start();
                    }
                }
                return;
            } catch (RuntimeException failure) {
                logAttempt(failure);
                try {
                    Thread.sleep(RETRY_MILLIS);
                } catch (InterruptedException interrupted) {
                    return; // stopped
                }
            }
        }
    }

    private void logAttempt(RuntimeException failure) {
        long now = System.nanoTime();
        boolean warn;
        synchronized (lock) {
            warn = lastLoggedNanos == 0 || now - lastLoggedNanos > LOG_EVERY_NANOS;
            if (warn) {
                lastLoggedNanos = now;
            }
        }
        if (warn) {
            log.warn(
                    "dbtasks {}: waiting for the database; trying every {} ms: {}",
                    config.workerId(),
                    RETRY_MILLIS,
                    failure.getMessage());
        } else {
            log.debug("dbtasks {}: the database is still away: {}", config.workerId(), failure.getMessage());
        }
    }

    /**
     * Stops the workers, or the wait for the database.
     *
     * @param timeout how long to wait for running tasks
     * @return whether every running task finished
     */
    public boolean stop(Duration timeout) {
        closed = true;
        Thread t;
        synchronized (lock) {
            t = starter;
        }
        if (t != null) {
            t.interrupt();
        }
        Engine e;
        synchronized (lock) {
            e = engine;
        }
        return e == null || e.stop(timeout);
    }

    /** @return whether workers were started (or wait for the database to start) and not stopped */
    public boolean isRunning() {
        Engine e = engine;
        return e != null ? e.isRunning() : startRequested && !closed;
    }

    /** @return the health of the engine, or DOWN with the reason while it waits for its database */
    public DbTasksHealth health() {
        Engine e = engine;
        if (e != null) {
            return e.health();
        }
        // No lock: an attempt to reach the database holds it for up to the pool's connection timeout.
        String failure = lastFailure;
        return new DbTasksHealth(
                null,
                Math.max(1, failures),
                lastFailureAt,
                failure,
                false,
                0,
                0,
                null,
                null,
                null,
                "dbtasks has not reached its database yet: " + failure);
    }

    /** @return the dialect's name, or {@code "unknown"} before the database was reached */
    public String dialectName() {
        Engine e = engine;
        return e == null ? "unknown" : e.dialect().name();
    }

    public int runningCount() {
        Engine e = engine;
        return e == null ? 0 : e.runningCount();
    }

    public long droppedEvents() {
        Engine e = engine;
        return e == null ? 0 : e.droppedEvents();
    }

    public long deadlocks() {
        Engine e = engine;
        return e == null ? 0 : e.deadlocks();
    }

    public java.util.List<io.dbtasks.ForeignTasks> foreignTasks() {
        Engine e = engine;
        return e == null ? java.util.List.of() : e.foreignTasks();
    }

    public long sweepRetention() {
        return ready().sweepRetention();
    }

    public int countHistory(int maxHours) {
        return ready().countHistory(maxHours);
    }

    public Enqueuer enqueuer() {
        return ready().enqueuer();
    }

    public TaskQueries queries() {
        return ready().queries();
    }

    public TaskOperations operations() {
        return ready().operations();
    }

    public LeaseLocks locks() {
        return ready().locks();
    }

    /**
     * @return the concurrency limits of the started engine; see {@link io.dbtasks.limit.Limits}
     * @throws IllegalStateException as {@link #ready()} says, before the engine is ready
     */
    public io.dbtasks.limit.Limits limits() {
        return ready().limits();
    }

    public RunOnceGuards guards() {
        return ready().guards();
    }

    public Inbox inbox() {
        return ready().inbox();
    }

    public Schedules schedules() {
        return ready().schedules();
    }

    public io.dbtasks.job.JobDefinitions jobs() {
        return ready().jobs();
    }

    public io.dbtasks.batch.Batches batches() {
        return ready().batches();
    }

    public io.dbtasks.workflow.Workflows workflows() {
        return ready().workflows();
    }

    public QueueControl queueControl() {
        return ready().queueControl();
    }
}
