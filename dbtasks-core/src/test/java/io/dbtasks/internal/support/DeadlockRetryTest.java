package io.dbtasks.internal.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasksException;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Jdbc#retryingDeadlocks}: a transaction the database rolled back as a deadlock victim
 * (SQLState class 40) runs again, whole, up to {@link Jdbc#DEADLOCK_ATTEMPTS} times; any other
 * failure is thrown at once. The engine records batches of outcomes this way: a MariaDB failure batch
 * that lost a deadlock (1213 / 40001) in a three-instance cluster test was dropped, and its 22 tasks
 * were rescued as LEASE_EXPIRED once their leases ran out, non-retryable failures included.
 */
class DeadlockRetryTest {
    @BeforeEach
    void postgres() throws SQLException {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "PostgreSQL is not in dbtasks.test.databases");
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS deadlock_probe (id INT PRIMARY KEY)");
            s.execute("DELETE FROM deadlock_probe");
        }
    }

    @Test
    void aDeadlockVictimRunsAgainAndItsRolledBackWritesAreNotDoubled() {
        Jdbc jdbc = new Jdbc(TestDatabase.POSTGRESQL.dataSource());
        AtomicInteger runs = new AtomicInteger();
        String result = Jdbc.retryingDeadlocks(() -> jdbc.inTransaction("Probe", c -> {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("INSERT INTO deadlock_probe (id) VALUES (1)");
            }
            if (runs.incrementAndGet() < Jdbc.DEADLOCK_ATTEMPTS) {
                throw new SQLTransactionRollbackException("deadlock detected", "40P01");
            }
            return "committed";
        }));
        assertThat(result).isEqualTo("committed");
        assertThat(runs).hasValue(Jdbc.DEADLOCK_ATTEMPTS);
        assertThat(rows()).as("the victims' inserts were rolled back").isEqualTo(1);
        assertThat(jdbc.deadlocks()).as("victims counted").isEqualTo(Jdbc.DEADLOCK_ATTEMPTS - 1);
    }

    @Test
    void aVictimEveryTimeFailsAfterTheLastAttemptAndOtherErrorsAreNotRetried() {
        Jdbc jdbc = new Jdbc(TestDatabase.POSTGRESQL.dataSource());
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> Jdbc.retryingDeadlocks(() -> jdbc.inTransaction("Probe", c -> {
                    runs.incrementAndGet();
                    throw new SQLTransactionRollbackException("Deadlock found", "40001");
                })))
                .isInstanceOf(DbTasksException.class)
                .hasRootCauseInstanceOf(SQLTransactionRollbackException.class);
        assertThat(runs).hasValue(Jdbc.DEADLOCK_ATTEMPTS);

        runs.set(0);
        assertThatThrownBy(() -> Jdbc.retryingDeadlocks(() -> jdbc.inTransaction("Probe", c -> {
                    runs.incrementAndGet();
                    try (Statement s = c.createStatement()) {
                        s.executeUpdate("INSERT INTO deadlock_probe (id) VALUES (2), (2)"); // duplicate key: 23505
                    }
                    return null;
                })))
                .isInstanceOf(DbTasksException.class)
                .hasMessageContaining("23505");
        assertThat(runs).as("a constraint violation is not a deadlock").hasValue(1);
        assertThat(jdbc.deadlocks())
                .as("victims counted, a constraint violation not")
                .isEqualTo(Jdbc.DEADLOCK_ATTEMPTS);
        assertThat(rows()).isZero();
    }

    private static long rows() {
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM deadlock_probe")) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
