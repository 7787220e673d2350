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
 * <p>{@link #detect} guesses whether a pooler sits between the engine and the server; {@link
 * #unnamedStatements} wraps a {@link DataSource} so every connection it lends has {@code
 * prepareThreshold} 0 and no named statement left from before. {@link #requireNotAborted} refuses
 * to commit a transaction an error has already aborted, which PostgreSQL would answer with {@code
 * ROLLBACK} and pgjdbc report as a success.
 *
 * <p>This class uses pgjdbc types; call it only when the dialect is PostgreSQL.
 */
public final class PostgresPooling {
    private PostgresPooling() {}

    /**
     * Guesses whether a pooler or proxy sits between this connection and the server: the server
     * was reached on another port than the JDBC URL names, or over a Unix socket while the client
     * used TCP. A port forward (a container's mapped port) looks the same; it costs only named
     * statements, and {@code transactionPooling(false)} says otherwise.
     *
     * @param c a connection of the engine's DataSource, not closed by this method
     * @return why a pooler is suspected, or empty if the connection looks direct
     * @throws SQLException if the server cannot be asked
     */
    public static Optional<String> detect(Connection c) throws SQLException {
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
     * ({@code prepareThreshold} 0). A connection that had named statements prepared before (by the
     * application, or pgjdbc's own named {@code COMMIT}) first runs {@code DEALLOCATE ALL}, after
     * which pgjdbc prepares nothing under a name on it again. The setting stays on the pooled
     * physical connection, so the application's statements on it become unnamed too, as they must
     * behind a transaction pooler.
     *
     * @param dataSource the application's DataSource
     * @return a DataSource lending the same connections, set up as above
     */
    public static DataSource unnamedStatements(DataSource dataSource) {
        return new UnnamedStatements(dataSource);
    }

    private static final class UnnamedStatements implements DataSource {
        private final DataSource delegate;

        UnnamedStatements(DataSource delegate) {
            this.delegate = delegate;
        }

        private static Connection setUp(Connection c) throws SQLException {
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
