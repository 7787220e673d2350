package io.dbtasks.internal.completion;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.MariaDbDialect;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * On MariaDB the guarded statements that find task rows by primary key read and lock them through
 * the primary key, also in the state where the optimizer would rather take the rescue index: a
 * small task table with few RUNNING rows. {@code EXPLAIN} names the index each one uses.
 */
class MariaDbKeyAccessTest {
    private final MariaDbDialect dialect = new MariaDbDialect();
    private final List<Long> running = new ArrayList<>();
    private final List<Long> finished = new ArrayList<>();

    @BeforeEach
    void fewRunningRows() throws SQLException {
        Assumptions.assumeTrue(TestDatabase.MARIADB.required(), "MariaDB is not in dbtasks.test.databases");
        DbTasks.builder(TestDatabase.MARIADB.dataSource())
                .workers(false)
                .build()
                .close();
        TestDatabase.MARIADB.clear();
        try (Connection c = TestDatabase.MARIADB.dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO dbtasks_task (queue, kind, status, max_attempts, backoff, backoff_initial_ms,"
                    + " backoff_max_ms, backoff_multiplier, backoff_jitter, run_at, created_at, updated_at, lease_token,"
                    + " lease_expires_at) WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 60)"
                    + " SELECT 'default', 'k', IF(n % 20 = 0, 'RUNNING', 'SUCCEEDED'), 3, 'FIXED', 1000, 1000, 2, 0,"
                    + " UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), n,"
                    + " IF(n % 20 = 0, UTC_TIMESTAMP(6), NULL) FROM s");
            s.execute("ANALYZE TABLE dbtasks_task");
            try (ResultSet rs = s.executeQuery("SELECT id, status FROM dbtasks_task ORDER BY id")) {
                while (rs.next()) {
                    (rs.getString(2).equals("RUNNING") ? running : finished).add(rs.getLong(1));
                }
            }
        }
        assertThat(running).hasSize(3);
    }

    @Test
    void guardedSingleRowUpdateUsesThePrimaryKey() throws SQLException {
        String sql = new TaskUpdate(dialect).to(TaskStatus.SUCCEEDED).held().sql();
        assertThat(indexOf(sql, running.get(0), 20L)).as(sql).isEqualTo("PRIMARY");
        sql = new TaskUpdate(dialect).to(TaskStatus.SUCCEEDED).held().sql();
        assertThat(indexOf(sql, finished.get(0), 1L)).as(sql).isEqualTo("PRIMARY");
    }

    @Test
    void batchUpdateOfRunningRowsUsesThePrimaryKey() throws SQLException {
        String sql = new TaskUpdate(dialect)
                .to(TaskStatus.SUCCEEDED)
                .whereIn(TaskStatus.RUNNING)
                .and("id IN (?, ?, ?, ?, ?)")
                .sql();
        assertThat(indexOf(sql, running.get(0), running.get(1), running.get(2), finished.get(0), finished.get(1)))
                .as(sql)
                .isEqualTo("PRIMARY");
    }

    @Test
    void settlingAndRescueLockThroughThePrimaryKey() throws SQLException {
        Object[] ids = {running.get(0), running.get(1), running.get(2), finished.get(0), finished.get(1)};
        String settle = TaskUpdate.lockRunning(dialect, "id, lease_token", ids.length);
        assertThat(indexOf(settle, ids)).as(settle).isEqualTo("PRIMARY");
        String rescue = TaskUpdate.lockExpired(dialect, "id, lease_token", ids.length);
        assertThat(indexOf(rescue, ids)).as(rescue).isEqualTo("PRIMARY");
    }

    /** @return the index EXPLAIN names for {@code sql} with {@code args} bound */
    private static String indexOf(String sql, Object... args) throws SQLException {
        try (Connection c = TestDatabase.MARIADB.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("EXPLAIN " + sql)) {
            int n = (int) sql.chars().filter(ch -> ch == '?').count();
            for (int i = 0; i < n; i++) {
                ps.setObject(i + 1, i < n - args.length ? "x" : args[i - (n - args.length)]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString("key");
            }
        }
    }
}
