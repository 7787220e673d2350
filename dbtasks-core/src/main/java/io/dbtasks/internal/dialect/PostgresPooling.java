package io.dbtasks.internal.dialect;

import java.io.PrintWriter;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.Optional;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * Working behind a connection pooler in transaction mode (PgBouncer's {@code pool_mode =
 * transaction}, and others alike), where each transaction may run on a different server backend.
 *
 * <p>pgjdbc prepares a statement on the server under a name ({@code S_1}, {@code S_2}, ...) once it
 * has run {@code prepareThreshold} (default 5) times on a connection, and from then on only sends
 * that name. Behind a transaction pooler the name may reach a backend where another client's
 * connection prepared a <em>different</em> statement under it. Seen behind PgBouncer 1.18: an
 * enqueue's {@code COMMIT}, itself a named statement after five commits, ran another client's {@code
 * S_6}, a {@code ROLLBACK}; both take no parameters, so nothing failed, pgjdbc does not check the
 * command tag, and the enqueue was acknowledged with the id of a row that was rolled back. With
 * {@code prepareThreshold=0} pgjdbc sends every statement unnamed (parsed and executed in the same
 * message group, on the same backend), which is what PgBouncer's documentation asks of clients.
 *
 * <p>{@link #detect} finds out whether a pooler sits between the engine and the server by how the
 * server sessions behave, not by addresses or ports (a sidecar PgBouncer on another loopback address
 * serves the same port number as the server): two open connections of a direct setup never share a
 * server process, and one connection's transactions never change it. {@link #switchable} wraps a
 * {@link DataSource} so every connection it lends has {@code prepareThreshold} 0 and no named
 * statement left from before, from the start or from the moment a later finding (the LISTEN
 * self-test's) says so through {@link #suspect}. {@link #requireNotAborted} refuses to commit a
 * transaction an error has already aborted, which PostgreSQL would answer with {@code ROLLBACK} and
 * pgjdbc report as a success.
 *
 * <p>This class uses pgjdbc types; call it only when the dialect is PostgreSQL.
 */
public final class PostgresPooling {
    private PostgresPooling() {}

    /** Server process ids read per connection by {@link #sharedSessions}. */
    private static final int PID_ROUNDS = 3;

    /**
     * Finds out whether a pooler or proxy sits between the engine and the server. First by
     * behaviour: {@code c} and a second connection of {@code dataSource}, both held open, read
     * {@code pg_backend_pid()} in turns, each read its own transaction. Directly connected, each
     * keeps one server process of its own; behind a transaction pooler, a transaction runs on
     * whichever server connection is free, and PgBouncer hands out the one released last, so the
     * second connection's first read lands on the process the first one just used. Then by where
     * the server was reached: another port than the JDBC URL names, or a Unix socket while the
     * client used TCP (a port forward looks the same; it costs only named statements, and {@code
     * transactionPooling(false)} says otherwise). If no second connection can be had, pooling is
     * assumed, since unnamed statements are safe everywhere.
     *
     * @param dataSource the engine's DataSource, lending the second connection
     * @param c a connection of {@code dataSource} in auto-commit mode, not closed by this method
     * @return why a pooler is suspected, or empty if the connection looks direct
     * @throws SQLException if the server cannot be asked through {@code c}
     */
    public static Optional<String> detect(DataSource dataSource, Connection c) throws SQLException {
        Optional<String> shared = sharedSessions(dataSource, c);
        return shared.isPresent() ? shared : detect(c);
    }

    private static Optional<String> sharedSessions(DataSource dataSource, Connection a) throws SQLException {
        Connection b;
        try {
            b = dataSource.getConnection();
        } catch (SQLException e) {
            return Optional.of("a second connection to test whether server sessions are shared could not be had ("
                    + e.getMessage() + ")");
        }
        try (b) {
            if (!b.getAutoCommit()) {
                b.setAutoCommit(true);
            }
            long[] pa = new long[PID_ROUNDS];
            long[] pb = new long[PID_ROUNDS];
            for (int i = 0; i < PID_ROUNDS; i++) {
                pa[i] = backendPid(a);
                pb[i] = backendPid(b);
            }
            for (int i = 0; i < PID_ROUNDS; i++) {
                if (pa[i] == pb[i] || (i + 1 < PID_ROUNDS && pb[i] == pa[i + 1])) {
                    return Optional.of(
                            "two open connections were served by the same server process (pid " + pb[i] + ") in turns");
                }
                if (pa[i] != pa[0] || pb[i] != pb[0]) {
                    return Optional.of("the transactions of one connection ran on different server processes (pids "
                            + (pa[i] != pa[0] ? pa[0] + " and " + pa[i] : pb[0] + " and " + pb[i]) + ")");
                }
            }
            return Optional.empty();
        }
    }

    private static long backendPid(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Guesses from where the server was reached whether a pooler or proxy sits between this
     * connection and the server: another port than the JDBC URL names, or a Unix socket while the
     * client used TCP.
     *
     * @param c a connection of the engine's DataSource, not closed by this method
     * @return why a pooler is suspected, or empty if nothing in the addresses tells
     * @throws SQLException if the server cannot be asked
     */
    static Optional<String> detect(Connection c) throws SQLException {
        int urlPort = urlPort(c.getMetaData().getURL());
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT inet_server_addr()::text, inet_server_port()")) {
            rs.next();
            String serverAddr = rs.getString(1);
            int serverPort = rs.getInt(2);
            if (serverAddr == null) {
                return Optional.of("the client connected over TCP (port " + urlPort
                        + ") but the server was reached over a Unix socket");
            }
            if (urlPort > 0 && serverPort != urlPort) {
                return Optional.of(
                        "the client connected to port " + urlPort + " but the server listens on " + serverPort);
            }
            return Optional.empty();
        }
    }

    /** @return the port of a {@code jdbc:postgresql://host:port/db} URL; 5432 if none; -1 if unreadable */
    static int urlPort(String jdbcUrl) {
        if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql://")) {
            return -1;
        }
        try {
            String hosts = jdbcUrl.substring("jdbc:postgresql://".length());
            int end = hosts.indexOf('/');
            hosts = end < 0 ? hosts : hosts.substring(0, end);
            if (hosts.contains(",")) {
                return -1; // a multi-host URL: which host answered is not known here
            }
            URI uri = URI.create("postgresql://" + hosts);
            return uri.getPort() < 0 ? 5432 : uri.getPort();
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    /**
     * Refuses to commit a transaction that an earlier error aborted: PostgreSQL would answer {@code
     * COMMIT} with {@code ROLLBACK}, and pgjdbc would return normally. Free: it reads the state
     * pgjdbc tracks from the server's last ReadyForQuery message. No-op on other drivers.
     *
     * @param c the connection about to commit
     * @throws SQLException (SQLState 25P02) if the transaction is aborted
     */
    public static void requireNotAborted(Connection c) throws SQLException {
        if (!Pgjdbc.PRESENT || !c.isWrapperFor(BaseConnection.class)) {
            return;
        }
        if (c.unwrap(BaseConnection.class).getTransactionState() == TransactionState.FAILED) {
            throw new SQLException(
                    "The transaction was aborted by an earlier error, so COMMIT would roll it back;"
                            + " nothing of it was stored",
                    "25P02");
        }
    }

    /**
     * Wraps {@code dataSource} so that every connection it lends sends unnamed statements only
     * ({@code prepareThreshold} 0).
     *
     * @param dataSource the application's DataSource
     * @return a DataSource lending the same connections, set up as {@link #switchable} describes
     */
    public static DataSource unnamedStatements(DataSource dataSource) {
        return new UnnamedStatements(dataSource, true);
    }

    /**
     * Wraps {@code dataSource} so that, once {@code unnamed} is true or {@link #suspect} was called
     * on the result, every connection it lends sends unnamed statements only ({@code
     * prepareThreshold} 0). A connection that had named statements prepared before (by the
     * application, or pgjdbc's own named {@code COMMIT}) first runs {@code DEALLOCATE ALL}, after
     * which pgjdbc prepares nothing under a name on it again. The setting stays on the pooled
     * physical connection, so the application's statements on it become unnamed too, as they must
     * behind a transaction pooler. Thread-safe.
     *
     * @param dataSource the application's DataSource
     * @param unnamed whether connections send unnamed statements from the start
     * @return a DataSource lending the same connections, set up as above
     */
    public static DataSource switchable(DataSource dataSource, boolean unnamed) {
        return new UnnamedStatements(dataSource, unnamed);
    }

    /**
     * Acts on a finding that server sessions are shared between connections (a transaction
     * pooler): from now on {@code dataSource}, if {@link #switchable} made it, lends connections
     * that send unnamed statements only. Idempotent; logs a warning the first time.
     *
     * @param dataSource the engine's DataSource
     * @param reason what was found, for the log
     * @return whether this call switched {@code dataSource} to unnamed statements
     */
    public static boolean suspect(DataSource dataSource, String reason) {
        try {
            if (dataSource.isWrapperFor(UnnamedStatements.class)
                    && dataSource.unwrap(UnnamedStatements.class).unnamed.compareAndSet(false, true)) {
                org.slf4j.LoggerFactory.getLogger(PostgresPooling.class)
                        .warn(
                                "dbtasks: {}, so a pooler in transaction mode sits between this application and"
                                        + " PostgreSQL; the engine's connections send unnamed statements only"
                                        + " (prepareThreshold=0) from now on. Add prepareThreshold=0 to the JDBC URL so"
                                        + " the application's own statements are safe too",
                                reason);
                return true;
            }
        } catch (SQLException e) {
            // a DataSource that cannot say what it wraps is not ours
        }
        return false;
    }

    /**
     * @param dataSource a DataSource, possibly made by {@link #switchable} or {@link
     *     #unnamedStatements}
     * @return whether it lends connections that send unnamed statements only because a pooler was
     *     declared or found; false for any other DataSource
     */
    public static boolean unnamed(DataSource dataSource) {
        try {
            return dataSource.isWrapperFor(UnnamedStatements.class)
                    && dataSource.unwrap(UnnamedStatements.class).unnamed.get();
        } catch (SQLException e) {
            return false;
        }
    }

    private static final class UnnamedStatements implements DataSource {
        private final DataSource delegate;
        private final java.util.concurrent.atomic.AtomicBoolean unnamed;

        UnnamedStatements(DataSource delegate, boolean unnamed) {
            this.delegate = delegate;
            this.unnamed = new java.util.concurrent.atomic.AtomicBoolean(unnamed);
        }

        private Connection setUp(Connection c) throws SQLException {
            if (!unnamed.get()) {
                return c;
            }
            try {
                PGConnection pg = c.unwrap(PGConnection.class);
                if (pg.getPrepareThreshold() != 0) {
                    pg.setPrepareThreshold(0);
                    try (Statement s = c.createStatement()) {
                        s.execute("DEALLOCATE ALL"); // pgjdbc forgets its named statements on this tag
                    }
                }
                return c;
            } catch (SQLException | RuntimeException e) {
                try {
                    c.close();
                } catch (SQLException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        }

        @Override
        public Connection getConnection() throws SQLException {
            return setUp(delegate.getConnection());
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return setUp(delegate.getConnection(username, password));
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return delegate.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            delegate.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            delegate.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return delegate.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            return delegate.getParentLogger();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            return iface.isInstance(this) ? iface.cast(this) : delegate.unwrap(iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) throws SQLException {
            return iface.isInstance(this) || delegate.isWrapperFor(iface);
        }
    }

    /** Whether pgjdbc is on the class path (it is an optional dependency of the core). */
    private static final class Pgjdbc {
        static final boolean PRESENT = present();

        private static boolean present() {
            try {
                Class.forName("org.postgresql.core.BaseConnection", false, PostgresPooling.class.getClassLoader());
                return true;
            } catch (ClassNotFoundException e) {
                return false;
            }
        }
    }
}
