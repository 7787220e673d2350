package io.dbtasks.internal.dialect;

import io.dbtasks.DbTasks;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import org.junit.jupiter.api.Assumptions;

/** What the PostgreSQL plan tests share: a migrated, empty schema, and a statement's plan. */
final class PostgresPlans {
    /** Binds a statement's parameters. */
    @FunctionalInterface
    interface Binds {
        void bind(PreparedStatement ps) throws SQLException;
    }

    private PostgresPlans() {}

    /**
     * Skips the test unless PostgreSQL is among the test databases; else migrates its schema and
     * empties its tables.
     */
    static void emptySchema() {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "PostgreSQL is not in dbtasks.test.databases");
        DbTasks.builder(TestDatabase.POSTGRESQL.dataSource())
                .workers(false)
                .build()
                .close();
        TestDatabase.POSTGRESQL.clear();
    }

    /**
     * @param sql a statement
     * @param binds binds its parameters
     * @return the plan {@code EXPLAIN} gives for it, a line per node
     */
    static String explain(String sql, Binds binds) throws SQLException {
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("EXPLAIN " + sql)) {
            binds.bind(ps);
            StringBuilder lines = new StringBuilder();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    lines.append(rs.getString(1)).append('\n');
                }
            }
            return lines.toString();
        }
    }
}
