package io.dbtasks.spring.autoconfigure;

import io.dbtasks.DbTasks;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the {@link DbTasks} workers once the application context is refreshed and stops them
 * gracefully when it closes: claiming stops, running tasks get up to the shutdown timeout to finish,
 * and the rest are handed back to PENDING without using up an attempt.
 *
 * <p>It runs in the last phase ({@link SmartLifecycle#DEFAULT_PHASE}), so workers start after every
 * other lifecycle bean (the web server included) and stop before them: requests that enqueue tasks
 * keep working while the workers drain. A {@code DbTasks} cannot be started again once stopped, so
 * this lifecycle refuses a start after a stop. Thread-safe.
 */
public class DbTasksLifecycle implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(DbTasksLifecycle.class);

    private final DbTasks dbTasks;
    private final Duration shutdownTimeout;
    private boolean stopped;

    /**
     * @param dbTasks the engine to start and stop; not {@code null}
     * @param shutdownTimeout how long {@link #stop()} waits for running tasks; not {@code null}
     */
    public DbTasksLifecycle(DbTasks dbTasks, Duration shutdownTimeout) {
        this.dbTasks = Objects.requireNonNull(dbTasks, "dbTasks");
        this.shutdownTimeout = Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    }

    /**
     * Starts the engine's workers; a no-op if they run already.
     *
     * @throws IllegalStateException if this lifecycle stopped the engine before
     */
    @Override
    public synchronized void start() {
        if (stopped) {
            throw new IllegalStateException(
                    "dbtasks was stopped with its application context and cannot be restarted; refresh a new context");
        }
        dbTasks.start();
    }

    /** Stops the workers, waiting up to the shutdown timeout for running tasks. */
    @Override
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        boolean drained = dbTasks.stop(shutdownTimeout);
        if (!drained) {
            log.warn("dbtasks: some tasks did not finish within {} and were handed back to PENDING", shutdownTimeout);
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return !stopped && dbTasks.isRunning();
    }
}
