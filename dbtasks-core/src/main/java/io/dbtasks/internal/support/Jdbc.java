package io.dbtasks.internal.support;

import io.dbtasks.DataRejectedException;
import io.dbtasks.DbTasksException;
import io.dbtasks.internal.dialect.PostgresPooling;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.Executor;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Borrows connections from the application's DataSource and turns SQL errors into ours. While the
 * engine holds a connection, its network timeout is the engine's statement timeout, so a statement
 * or commit that stalls fails instead of hanging; the previous timeout is restored before the
 * connection goes back. Every unit of work is counted for {@link io.dbtasks.DbTasksHealth}.
 */
public final class Jdbc {
    private static final Logger log = LoggerFactory.getLogger(Jdbc.class);
    /** Drivers abort a timed-out connection on this executor; PostgreSQL's and MariaDB's ignore it. */
    private static final Executor ABORT_EXECUTOR = Runnable::run;
    /** A unit of work on a connection. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    private final DataSource dataSource;
    private final int timeoutMillis;
    private final HealthTracker health;
    private final java.util.concurrent.atomic.LongAdder deadlocks = new java.util.concurrent.atomic.LongAdder();
    /** Run once on each physical connection the engine borrows; null for none. */
    private final String sessionSetup;
    /**
     * The physical connections {@link #sessionSetup} ran on, weakly held: a pool lends the same one
     * many times, and the setup costs a round trip only the first time.
     */
    private final Map<Connection, Boolean> setUp = Collections.synchronizedMap(new WeakHashMap<>());

    /** Without a statement timeout. */
    public Jdbc(DataSource dataSource) {
        this(dataSource, Duration.ZERO, new HealthTracker(), null);
    }

    public Jdbc(DataSource dataSource, Duration statementTimeout, HealthTracker health) {
        this(dataSource, statementTimeout, health, null);
    }

    /**
     * @param sessionSetup a statement run once on each physical connection borrowed here before its
     *     first use (see {@link io.dbtasks.internal.dialect.Dialect#idleInTransactionLimit}); null
     *     for none
     */
    public Jdbc(DataSource dataSource, Duration statementTimeout, HealthTracker health, String sessionSetup) {
        this.dataSource = dataSource;
        this.timeoutMillis = (int) Math.min(Integer.MAX_VALUE, statementTimeout.toMillis());
        this.health = health;
        this.sessionSetup = sessionSetup;
    }

    public DataSource dataSource() {
        return dataSource;
    }

    /** Runs {@code work} on a connection in auto-commit mode. */
    public <T> T withConnection(String what, Work<T> work) {
        return borrow(what, c -> {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            return work.run(c);
        });
    }

    /** How much longer than a statement's own time limit its connection waits for the database. */
    static final Duration OWN_LIMIT_MARGIN = Duration.ofSeconds(5);

    /**
     * As {@link #withConnection(String, Work)} for work whose statements carry their own time limit
     * ({@link java.sql.Statement#setQueryTimeout}), which may be longer than the statement timeout:
     * the connection then waits that long plus {@link #OWN_LIMIT_MARGIN}, so the statement is
     * cancelled by its limit rather than its connection aborted as stalled.
     *
     * @param what what the work does, for error messages
     * @param ownLimit the statements' own time limit, or {@code null} for none (the statement
     *     timeout applies)
     * @param work the work
     * @return what {@code work} returned
     * @throws DbTasksException if {@code work} throws an {@link SQLException}
     */
    public <T> T withConnection(String what, Duration ownLimit, Work<T> work) {
        int millis = timeoutMillis;
        if (ownLimit != null && timeoutMillis > 0) {
            millis = (int) Math.min(
                    Integer.MAX_VALUE,
                    Math.max(timeoutMillis, ownLimit.plus(OWN_LIMIT_MARGIN).toMillis()));
        }
        return borrow(what, millis, c -> {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            return work.run(c);
        });
    }

    /** Runs {@code work} in one transaction: committed if it returns, rolled back if it throws. */
    public <T> T inTransaction(String what, Work<T> work) {
        return borrow(what, c -> inTransaction(c, work));
    }

    /** How many times {@link #retryingDeadlocks} runs work that the database chose as a deadlock victim. */
    static final int DEADLOCK_ATTEMPTS = 3;

    /**
     * The longest pause, in milliseconds, before the second run of work rolled back as a victim;
     * doubled before each later run.
     */
    static final long RETRY_PAUSE_MILLIS = 10;

    /**
     * Runs {@code work} (a call of this class, such as {@link #inTransaction(String, Work)}) again, up
     * to {@value #DEADLOCK_ATTEMPTS} times in all, when the database rolled its transaction back as a
     * deadlock victim or serialization failure (SQLState class 40: MariaDB and MySQL 1213 / 40001,
     * PostgreSQL 40P01 and 40001, a Galera certification failure), as the database's own message
     * asks, after a random pause ({@link #pauseBeforeRetry}): two transactions that conflicted, run
     * again at once, would meet again (on Galera, two nodes' claims of the same rows). Only for work
     * that may run again whole: its transaction was rolled back, and it has no effect outside it.
     *
     * @param work the work, which throws {@link DbTasksException} with the {@link SQLException} as its
     *     cause when it fails
     * @return what {@code work} returned
     * @throws DbTasksException the last failure, if every attempt failed, or the first that is not
     *     a rollback of class 40
     */
    public static <T> T retryingDeadlocks(java.util.function.Supplier<T> work) {
        for (int attempt = 1; ; attempt++) {
            try {
                return work.get();
            } catch (DbTasksException e) {
                if (attempt >= DEADLOCK_ATTEMPTS || !rolledBackAsVictim(e)) {
                    throw e;
                }
                log.info(
                        "Deadlock victim, running it again (attempt {} of {}): {}",
                        attempt + 1,
                        DEADLOCK_ATTEMPTS,
                        e.getMessage());
                pauseBeforeRetry(attempt);
            }
        }
    }

    /**
     * Sleeps a random time before running again work that the database rolled back as a victim
     * (SQLState class 40): {@link #retryPauseMillis} with a uniform random draw. An interrupt ends the
     * pause early and stays set on the thread.
     *
     * @param failedRuns how many runs of the work failed so far, at least 1
     */
    public static void pauseBeforeRetry(int failedRuns) {
        long millis = retryPauseMillis(
                failedRuns, java.util.concurrent.ThreadLocalRandom.current().nextDouble());
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * @param failedRuns how many runs failed so far, at least 1
     * @param random a draw in [0, 1)
     * @return the pause in milliseconds: {@code random} times {@value #RETRY_PAUSE_MILLIS} ms doubled
     *     for each failed run after the first (below 10 ms, then below 20 ms, ...)
     */
    static long retryPauseMillis(int failedRuns, double random) {
        long cap = RETRY_PAUSE_MILLIS << Math.min(Math.max(failedRuns, 1) - 1, 10);
        return (long) (random * cap);
    }

    private static boolean rolledBackAsVictim(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql
                    && sql.getSQLState() != null
                    && sql.getSQLState().startsWith("40")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Runs {@code work} on a borrowed connection whose network timeout is the statement timeout,
     * restored (whatever {@code work} did to it, and whether it returned or threw) before the
     * connection goes back; records the outcome for health. The connection's auto-commit mode is
     * left as the pool lent it.
     *
     * @param what what the work does, for error messages
     * @param work the work
     * @return what {@code work} returned
     * @throws DbTasksException if {@code work} throws an {@link SQLException}
     */
    public <T> T borrow(String what, Work<T> work) {
        return borrow(what, timeoutMillis, work);
    }

    /** {@link #borrow(String, Work)} with a network timeout of {@code networkTimeoutMillis} (0: none). */
    private <T> T borrow(String what, int networkTimeoutMillis, Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            int previous = networkTimeout(c);
            try {
                if (networkTimeoutMillis > 0 && previous >= 0) {
                    c.setNetworkTimeout(ABORT_EXECUTOR, networkTimeoutMillis);
                }
                if (sessionSetup != null) {
                    setUp(c);
                }
                T result = work.run(c);
                health.success();
                return result;
            } finally {
                restoreNetworkTimeout(c, previous);
            }
        } catch (SQLException e) {
            if (rolledBackAsVictim(e)) {
                deadlocks.increment();
            }
            DbTasksException failure = failure(what, e);
            if (failure instanceof DataRejectedException || cancelledAtTimeLimit(e)) {
                // The database answered: the values were wrong, or the statement ran past the time
                // limit its caller set; the store is not failing, so its health is unchanged.
                throw failure;
            }
            if (isStall(e)) {
                String message = what + " stalled longer than statementTimeout (" + networkTimeoutMillis
                        + " ms) and was aborted; the database or the network to it is hanging: " + e.getMessage();
                log.warn(message);
                health.failure(message);
            } else {
                health.failure(failure.getMessage());
            }
            throw failure;
        } catch (RuntimeException | Error e) {
            health.failure(what + " failed: " + e);
            throw e;
        }
    }

    /**
     * Runs {@link #sessionSetup} on {@code c} unless it ran on its physical connection before. Only
     * in auto-commit mode, so that a pool lending connections in a transaction cannot roll it back.
     */
    private void setUp(Connection c) throws SQLException {
        Connection physical = c.isWrapperFor(Connection.class) ? c.unwrap(Connection.class) : c;
        if (setUp.containsKey(physical) || !c.getAutoCommit()) {
            return;
        }
        try (java.sql.Statement s = c.createStatement()) {
            s.execute(sessionSetup);
        }
        setUp.put(physical, Boolean.TRUE);
    }

    /** @return the connection's network timeout, or -1 where the driver has none (embedded H2) */
    private static int networkTimeout(Connection c) throws SQLException {
        try {
            return c.getNetworkTimeout();
        } catch (SQLFeatureNotSupportedException | UnsupportedOperationException e) {
            return -1;
        }
    }

    /** Puts the network timeout back, unless the driver has none or the connection broke. */
    private static void restoreNetworkTimeout(Connection c, int previous) {
        if (previous < 0) {
            return;
        }
        try {
            if (!c.isClosed() && c.getNetworkTimeout() != previous) {
                c.setNetworkTimeout(ABORT_EXECUTOR, previous);
            }
        } catch (SQLException e) {
            log.debug("Restoring the network timeout failed; the connection is likely broken", e);
        }
    }

    private static boolean isStall(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLTimeoutException || t instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return how many units of work through this instance the database rolled back as a deadlock
     *     victim or serialization failure (SQLState class 40); thread-safe
     */
    public long deadlocks() {
        return deadlocks.sum();
    }

    /** @return the health snapshot of the work done through this instance */
    public io.dbtasks.DbTasksHealth health() {
        return health.snapshot();
    }

    /**
     * Runs {@code work} in one transaction on {@code c}, restoring its auto-commit mode after. A
     * transaction that an error inside {@code work} aborted is never committed, even if {@code work}
     * caught the error: on PostgreSQL that COMMIT would silently roll back (see {@link
     * PostgresPooling#requireNotAborted}).
     */
    public static <T> T inTransaction(Connection c, Work<T> work) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        if (autoCommit) {
            c.setAutoCommit(false);
        }
        try {
            T result = work.run(c);
            PostgresPooling.requireNotAborted(c);
            c.commit();
            return result;
        } catch (SQLException | RuntimeException | Error e) {
            try {
                c.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        } finally {
            if (autoCommit) {
                c.setAutoCommit(true);
            }
        }
    }

    /**
     * Checks the row count of a guarded UPDATE of one row.
     *
     * @return {@code true} for 1 row (ours), {@code false} for 0 (someone else's)
     * @throws IllegalStateException for more: the guard was not a key, a bug
     */
    public static boolean changedOne(int rows, String what) {
        if (rows > 1) {
            throw new IllegalStateException(what + " changed " + rows + " rows");
        }
        return rows == 1;
    }

    /**
     * Wraps an SQL error in a message that says what was being done: a {@link DataRejectedException}
     * when the database refused a value (SQLState class 22 or 23), a {@link DbTasksException}
     * otherwise.
     */
    public static DbTasksException failure(String what, SQLException e) {
        String state = e.getSQLState();
        if (state != null && (state.startsWith("22") || state.startsWith("23"))) {
            return new DataRejectedException(
                    what + " failed: the database refused a value (" + e.getMessage() + ", SQLState " + state
                            + "); check the values passed in (length, range, characters)",
                    state,
                    e);
        }
        if (cancelledAtTimeLimit(e)) {
            return new DbTasksException(
                    what + " was cancelled by the database at its time limit (" + e.getMessage() + ", SQLState " + state
                            + "); narrow it with more filters or give it a longer timeout",
                    e);
        }
        return new DbTasksException(
                what + " failed: " + e.getMessage() + " (SQLState " + e.getSQLState()
                        + "); check that the database is reachable and the dbtasks schema is migrated",
                e);
    }

    /**
     * Whether the database cancelled the statement at a time limit or on request and stayed up:
     * SQLState 57014 (PostgreSQL, H2: {@code query_canceled}) or 70100 (MariaDB: interrupted, as by
     * {@code max_statement_time}, which the driver uses for {@link java.sql.Statement#setQueryTimeout}).
     */
    static boolean cancelledAtTimeLimit(SQLException e) {
        String state = e.getSQLState();
        return "57014".equals(state) || "70100".equals(state);
    }
}
