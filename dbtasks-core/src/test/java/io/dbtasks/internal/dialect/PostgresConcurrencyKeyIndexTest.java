package io.dbtasks.internal.dialect;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.TaskStatus;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * On PostgreSQL the index by concurrency key covers finished tasks only: every day partition has
 * one of its own, and the live partition none, so a keyed task's enqueue and claim write no entry
 * into it. A search by key over history still reads it, and the live reads by key read the per-key
 * claim index (PENDING) and the rescue index (RUNNING), never the whole live partition. Beside the
 * live rows: 20,000 PENDING tasks over 500 keys of one queue and 50 RUNNING ones; history: 100,000
 * finished tasks over 1,000 keys in today's partition.
 */
class PostgresConcurrencyKeyIndexTest {
    private static final int BACKLOG = 20_000;
    private static final int HISTORY = 100_000;

    @BeforeEach
    void liveTasksAndHistory() throws SQLException {
        PostgresPlans.emptySchema();
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement()) {
            String columns = "INSERT INTO dbtasks_task (queue, kind, status, attempt, max_attempts, backoff,"
                    + " backoff_initial_ms, backoff_max_ms, backoff_multiplier, backoff_jitter, run_at, created_at,"
                    + " updated_at, finished_at, history_day, concurrency_key, lease_expires_at) SELECT ";
            s.executeUpdate(columns + "'hist', 'k', 'SUCCEEDED', 1, 3, 'FIXED', 1000, 1000, 1.0, 0.0, now(), now(),"
                    + " now(), now(), (floor(extract(epoch FROM now()) / 86400))::INTEGER, CONCAT('h', MOD(g.n, 1000)),"
                    + " NULL FROM generate_series(1, " + HISTORY + ") AS g(n)");
            s.executeUpdate(columns + "'backlog', 'k', 'PENDING', 0, 3, 'FIXED', 1000, 1000, 1.0, 0.0, now(), now(),"
                    + " now(), NULL, 0, CONCAT('k', MOD(g.n, 500)), NULL FROM generate_series(1, " + BACKLOG
                    + ") AS g(n)");
            s.executeUpdate(columns + "'backlog', 'k', 'RUNNING', 1, 3, 'FIXED', 1000, 1000, 1.0, 0.0, now(), now(),"
                    + " now(), NULL, 0, CONCAT('k', MOD(g.n, 5)), now() + INTERVAL '1 minute'"
                    + " FROM generate_series(1, 50) AS g(n)");
            s.execute("VACUUM ANALYZE dbtasks_task_live");
            s.execute("ANALYZE dbtasks_task");
        }
    }

    @AfterEach
    void clear() {
        if (TestDatabase.POSTGRESQL.required()) {
            TestDatabase.POSTGRESQL.clear();
        }
    }

    @Test
    void theLivePartitionHasNoIndexLedByTheKeyAndEveryDayPartitionHasOne() throws SQLException {
        List<String> live = indexesLedByTheKey("dbtasks_task_live");
        assertThat(live)
                .as("indexes of the live partition led by concurrency_key")
                .isEmpty();
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs =
                        s.executeQuery("SELECT c.relname FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid"
                                + " WHERE h.inhparent = 'dbtasks_task'::regclass"
                                + " AND c.relname <> 'dbtasks_task_live'")) {
            int partitions = 0;
            while (rs.next()) {
                partitions++;
                assertThat(indexesLedByTheKey(rs.getString(1)))
                        .as(rs.getString(1))
                        .hasSize(1);
            }
            assertThat(partitions).isPositive();
        }
    }

    @Test
    void aDayPartitionCreatedLaterOrFoundWithoutItIsIndexedByTheKey() throws SQLException {
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement()) {
            int day;
            try (ResultSet rs = s.executeQuery("SELECT (floor(extract(epoch FROM now()) / 86400))::INTEGER + 40")) {
                rs.next();
                day = rs.getInt(1);
            }
            s.execute("SELECT dbtasks_create_history_days(" + day + ", " + day + ")");
            String partition;
            try (ResultSet rs =
                    s.executeQuery("SELECT 'dbtasks_task_p' || to_char(DATE '1970-01-01' + " + day + ", 'YYYYMMDD')")) {
                rs.next();
                partition = rs.getString(1);
            }
            try {
                assertThat(indexesLedByTheKey(partition)).hasSize(1);
                // A day made meanwhile without it (by an engine older than the index per day) gets it
                // at the next run over its day.
                s.execute("DROP INDEX " + partition + "_concurrency_key_idx");
                s.execute("SELECT dbtasks_create_history_days(" + day + ", " + day + ")");
                assertThat(indexesLedByTheKey(partition)).hasSize(1);
            } finally {
                s.execute("SELECT dbtasks_drop_history_day(" + day + ")");
            }
        }
    }

    @Test
    void aSearchByKeyReadsEachDayPartitionsOwnIndex() throws SQLException {
        String plan = plan("SELECT id FROM dbtasks_task WHERE concurrency_key = ?", List.of("h7"));
        assertThat(plan).as(plan).containsPattern("Scan (using|on) dbtasks_task_p\\d{8}_concurrency_key_idx");
    }

    @Test
    void liveReadsByKeyReadTheirStatesIndexesNotTheLivePartition() throws SQLException {
        for (TaskStatus state : List.of(TaskStatus.PENDING, TaskStatus.RUNNING)) {
            String plan = plan(Dialect.liveOfKeys(state, 2), List.of("backlog", "k1", "k2"));
            assertThat(plan).as(plan).doesNotContain("Seq Scan");
            assertThat(plan)
                    .as(plan)
                    .contains(
                            state == TaskStatus.PENDING
                                    ? "dbtasks_task_live_key_claim_idx"
                                    : "dbtasks_task_live_rescue_idx");
        }
    }

    private static String plan(String sql, List<String> binds) throws SQLException {
        return PostgresPlans.explain(sql, ps -> {
            for (int i = 0; i < binds.size(); i++) {
                ps.setString(i + 1, binds.get(i));
            }
        });
    }

    /** The indexes of a table whose first column is concurrency_key. */
    private static List<String> indexesLedByTheKey(String table) throws SQLException {
        List<String> names = new ArrayList<>();
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                PreparedStatement ps =
                        c.prepareStatement("SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid"
                                + " JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]"
                                + " WHERE x.indrelid = to_regclass(?) AND a.attname = 'concurrency_key'")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                }
            }
        }
        return names;
    }
}
