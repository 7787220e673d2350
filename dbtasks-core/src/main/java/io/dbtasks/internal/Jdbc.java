package io.dbtasks.internal;

import io.dbtasks.DbTasksException;
import io.dbtasks.internal.dialect.PostgresPooling;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Borrows connections from the application's DataSource and turns SQL errors into ours. */
public final class Jdbc {
    /** A unit of work on a connection. */
    @FunctionalInterface
    public interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    private final DataSource dataSource;

    public Jdbc(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    public DataSource dataSource() {
        return dataSource;
    }

    /** Runs {@code work} on a connection in auto-commit mode. */
    public <T> T withConnection(String what, Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            return work.run(c);
        } catch (SQLException e) {
            throw failure(what, e);
        }
    }

    /** Runs {@code work} in one transaction: committed if it returns, rolled back if it throws. */
    public <T> T inTransaction(String what, Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            return inTransaction(c, work);
        } catch (SQLException e) {
            throw failure(what, e);
        }
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

    /** Wraps an SQL error in a message that says what was being done. */
    public static DbTasksException failure(String what, SQLException e) {
        return new DbTasksException(
                what + " failed: " + e.getMessage() + " (SQLState " + e.getSQLState()
                        + "); check that the database is reachable and the dbtasks schema is migrated",
                e);
    }
}
