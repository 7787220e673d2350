package io.dbtasks.internal.dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL {@code LISTEN} on a dedicated connection, so an idle worker starts a task enqueued by
 * any instance within milliseconds instead of at its next poll. Enqueues {@code NOTIFY} the queue
 * name, delivered when their transaction commits. If the connection breaks, the listener reconnects
 * with backoff; meanwhile, and always, polling remains the fallback, so a lost notification only
 * delays a task by up to one poll interval.
 *
 * <p>After each {@code LISTEN} the listener sends itself a test notification from another
 * connection and waits up to {@value #CHECK_MILLIS} ms for it. A pooler in transaction mode
 * (PgBouncer's {@code pool_mode = transaction}) runs the {@code LISTEN} on whichever backend is free
 * and drops what that backend hears later, so the test notification never arrives. The listener
 * stops at once if the sender ran in the listening server session itself (proof that sessions are
 * shared), or after {@value #MAX_MISSED_CHECKS} checks in a row that timed out (listening again on
 * a fresh connection each time, in case the server was only slow); it then logs a warning that
 * names polling as the fallback and gives its connection back.
 */
final class PostgresListener implements AutoCloseable, Runnable, java.util.function.BooleanSupplier {
    static final String CHANNEL = "dbtasks_task";
    private static final Logger log = LoggerFactory.getLogger(PostgresListener.class);
    private static final int WAIT_MILLIS = 500;
    private static final long MAX_BACKOFF_MILLIS = 30_000;
    static final long CHECK_MILLIS = 3000;
    /** A listener whose test notification did not come back this often in a row stops. */
    static final int MAX_MISSED_CHECKS = 3;

    private static final String CHECK_PREFIX = "dbtasks:listen-check:";

    private final DataSource dataSource;
    private final Consumer<String> onQueue;
    private final Duration pollInterval;
    private final Thread thread;
    private volatile Boolean working; // null until the first test notification arrived or did not
    private int missedChecks; // test notifications in a row that did not come back; listener thread only
    private volatile boolean running = true;
    private volatile Connection connection;

    private PostgresListener(DataSource dataSource, Consumer<String> onQueue, Duration pollInterval) {
        this.dataSource = dataSource;
        this.onQueue = onQueue;
        this.pollInterval = pollInterval;
        this.thread = new Thread(this, "dbtasks-listen");
        this.thread.setDaemon(true);
    }

    static PostgresListener start(DataSource dataSource, Consumer<String> onQueue, Duration pollInterval) {
        PostgresListener l = new PostgresListener(dataSource, onQueue, pollInterval);
        l.thread.start();
        return l;
    }

    @Override
    public void run() {
        long backoff = 100;
        while (running) {
            try (Connection c = dataSource.getConnection()) {
                connection = c;
                c.setAutoCommit(true);
                long listenerPid = listen(c);
                PGConnection pg = c.unwrap(PGConnection.class);
                backoff = 100;
                String check = CHECK_PREFIX + UUID.randomUUID();
                boolean sameBackend = sendCheck(check) == listenerPid;
                long checkDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CHECK_MILLIS);
                boolean checked = false;
                while (running) {
                    PGNotification[] notes = pg.getNotifications(WAIT_MILLIS);
                    if (notes != null) {
                        for (PGNotification n : notes) {
                            if (n.getParameter().equals(check)) {
                                checked = true;
                                working = true;
                            } else if (!n.getParameter().startsWith(CHECK_PREFIX)) {
                                onQueue.accept(n.getParameter());
                            }
                        }
                    }
                    if (!checked
                            && !sameBackend
                            && System.nanoTime() - checkDeadline > 0
                            && ++missedChecks < MAX_MISSED_CHECKS) {
                        // Maybe only slow: listen again on a fresh connection before giving up.
                        unlisten(c);
                        throw new SQLException("the test notification did not arrive within " + CHECK_MILLIS + " ms ("
                                + missedChecks + " of " + MAX_MISSED_CHECKS + " tries)");
                    }
                    if (checked) {
                        missedChecks = 0;
                    }
                    if (!checked && (sameBackend || System.nanoTime() - checkDeadline > 0)) {
                        working = false;
                        // When in doubt, unnamed statements: they are safe behind any pooler.
                        PostgresPooling.suspect(
                                dataSource,
                                sameBackend
                                        ? "the server session that ran LISTEN served another connection's transaction"
                                        : "LISTEN's test notification did not arrive");
                        log.warn(
                                "dbtasks: LISTEN does not work through this connection: {} (a pooler in"
                                        + " transaction mode, such as PgBouncer with"
                                        + " pool_mode = transaction, drops notifications). Tasks enqueued by other"
                                        + " instances are found by polling, every {}; local enqueues still wake"
                                        + " workers at once. Declare transactionPooling(true) to skip this check",
                                sameBackend
                                        ? "the server session that ran LISTEN served another connection's transaction"
                                        : "a test notification did not arrive within " + CHECK_MILLIS + " ms, "
                                                + MAX_MISSED_CHECKS + " times",
                                pollInterval);
                        unlisten(c);
                        return;
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (!running) {
                    return;
                }
                log.warn(
                        "LISTEN connection failed ({}); polling covers the gap, reconnecting in {} ms",
                        e.getMessage(),
                        backoff);
                sleep(backoff);
                backoff = Math.min(backoff * 2, MAX_BACKOFF_MILLIS);
            } finally {
                connection = null;
            }
        }
    }

    /**
     * Runs {@code LISTEN} and reads the server process id in one transaction, so both surely run in
     * the same server session even behind a transaction pooler.
     *
     * @return the process id of the server session that listens
     */
    private static long listen(Connection c) throws SQLException {
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.execute("LISTEN " + CHANNEL);
            try (ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                long pid = rs.getLong(1);
                c.commit(); // LISTEN takes effect at commit
                return pid;
            }
        } finally {
            c.setAutoCommit(true);
        }
    }

    /**
     * Sends the test notification from another connection, as another instance's enqueue would.
     *
     * @return the process id of the server session that sent it; the listener's own means that
     *     server sessions are shared between connections (transaction pooling), so the listening
     *     session does not stay the listener's
     */
    private long sendCheck(String payload) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid(), pg_notify('" + CHANNEL + "', ?)")) {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            ps.setString(1, payload);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static void unlisten(Connection c) {
        try (Statement s = c.createStatement()) {
            s.execute("UNLISTEN " + CHANNEL);
        } catch (SQLException e) {
            log.debug("UNLISTEN failed; the connection is closed anyway", e);
        }
    }

    /**
     * @return {@code true} once a test notification came back, {@code false} if one did not and the
     *     listener stopped, {@code null} while the first check is under way
     */
    Boolean working() {
        return working;
    }

    /** @return whether the listening connection is open and LISTEN runs on it now */
    @Override
    public boolean getAsBoolean() {
        return running && connection != null && !Boolean.FALSE.equals(working);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(WAIT_MILLIS * 4L);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
