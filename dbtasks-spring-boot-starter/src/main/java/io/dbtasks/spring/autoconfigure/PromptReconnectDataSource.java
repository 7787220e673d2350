package io.dbtasks.spring.autoconfigure;

import java.io.PrintWriter;
import java.net.ConnectException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;

/**
 * The driver connections of a HikariCP pool, opened again every {@value #RETRY_MILLIS} ms while the
 * database cannot be reached, so that the pool has a connection within that time of the database's
 * return.
 *
 * <p>HikariCP adds connections on one thread, which after each failed attempt sleeps twice as long
 * as before, up to 5 s; after an outage of a few seconds the pool therefore holds no connection for
 * up to 5 s after the database accepts connections again, and every caller waits. Here a failed
 * attempt that says the database is unreachable (SQLState class 08, PostgreSQL's 57P01-57P03 while
 * it shuts down or starts up, a refused or failed connection) is retried at a short, fixed interval
 * inside one attempt of the pool's, for as long as the pool {@code retrying} says so (while it is
 * started and not closed): the pool's own backoff then hardly grows. Any other failure (a wrong
 * password, an unknown database) is reported at once, as before.
 *
 * <p>Thread-safe, as the DataSource it wraps.
 */
final class PromptReconnectDataSource implements DataSource {
    /** The pause between two attempts to connect to a database that cannot be reached. */
    static final long RETRY_MILLIS = 50;

    private final DataSource driver;
    private final BooleanSupplier retrying;

    /**
     * @param driver opens one driver connection per call
     * @param retrying whether to keep trying now (the pool is started and open); checked before each
     *     retry
     */
    PromptReconnectDataSource(DataSource driver, BooleanSupplier retrying) {
        this.driver = driver;
        this.retrying = retrying;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return connect(driver::getConnection);
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return connect(() -> driver.getConnection(username, password));
    }

    private interface Opener {
        Connection open() throws SQLException;
    }

    private Connection connect(Opener opener) throws SQLException {
        while (true) {
            try {
                return opener.open();
            } catch (SQLException e) {
                if (!unreachable(e) || !retrying.getAsBoolean()) {
                    throw e;
                }
                try {
                    Thread.sleep(RETRY_MILLIS);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** @return whether {@code e} says the database could not be reached, rather than refused us */
    static boolean unreachable(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLTransientConnectionException
                    || t instanceof SQLNonTransientConnectionException
                    || t instanceof ConnectException) {
                return true;
            }
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                String state = sql.getSQLState();
                if (state.startsWith("08") || state.startsWith("57P0")) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return driver.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        driver.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        driver.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return driver.getLoginTimeout();
    }

    @Override
    public java.util.logging.Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return driver.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return iface.isInstance(this) ? iface.cast(this) : driver.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || driver.isWrapperFor(iface);
    }
}
