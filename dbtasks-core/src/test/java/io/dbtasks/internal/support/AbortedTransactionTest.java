package io.dbtasks.internal.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasksException;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL answers {@code COMMIT} of a transaction that an error aborted with {@code ROLLBACK},
 * and pgjdbc (42.7) returns from {@code commit()} normally. The engine's transactions must never be
 * reported as committed then.
 */
class AbortedTransactionTest {
    @BeforeEach
    void postgres() throws SQLException {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "PostgreSQL is not in dbtasks.test.databases");
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS aborted_probe (id INT PRIMARY KEY)");
            s.execute("DELETE FROM aborted_probe");
        }
    }

    @Test
    void commitOfAnAbortedTransactionIsRefusedNotSilentlyRolledBack() throws SQLException {
        Jdbc jdbc = new Jdbc(TestDatabase.POSTGRESQL.dataSource());
        assertThatThrownBy(() -> jdbc.inTransaction("Probe", c -> {
                    try (Statement s = c.createStatement()) {
                        s.executeUpdate("INSERT INTO aborted_probe (id) VALUES (1)");
                        try {
                            s.executeUpdate("INSERT INTO aborted_probe (id) VALUES (1)"); // duplicate key
                        } catch (SQLException swallowed) {
                            // a caller that swallows an error leaves the transaction aborted
                        }
                    }
                    return "acknowledged";
                }))
                .isInstanceOf(DbTasksException.class)
                .hasMessageContaining("aborted")
                .hasMessageContaining("25P02");
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM aborted_probe")) {
            rs.next();
            assertThat(rs.getLong(1)).as("rows stored").isZero();
        }
    }
}
