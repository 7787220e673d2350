package io.dbtasks.internal.dialect;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * On PostgreSQL a queue's backlog beside a long history is claimed through the live partition's
 * claim index in claim order, as the planner plans the claim for the queue the engine binds: the
 * claim names the live partition ({@code history_day = 0}), so neither history's day partitions nor
 * their statistics enter the plan. History is many rows in eight other queues and three finished
 * states, in today's partition; the backlog is 20,000 PENDING rows of one queue. Before history had
 * partitions of its own, the backlog and the PENDING state were each a small share of one table, and
 * taken as independent conditions the planner read every PENDING row of the queue through a bitmap
 * scan and sorted them to return the first 250 (beside ten million finished rows: a sort of 200,000
 * rows spilled to disk, 189 ms per claim instead of 0.1 ms); a sort over an append of partitions
 * would cost the same.
 */
class PostgresClaimPlanTest {
    private static final int HISTORY = 300_000;
    private static final int QUEUES = 8;
    private static final int BACKLOG = 20_000;

    @BeforeEach
    void historyAndABacklog() throws SQLException {
        PostgresPlans.emptySchema();
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement()) {
            String columns = "INSERT INTO dbtasks_task (queue, kind, status, attempt, max_attempts, backoff,"
                    + " backoff_initial_ms, backoff_max_ms, backoff_multiplier, backoff_jitter, run_at, created_at,"
                    + " updated_at, finished_at, history_day) SELECT ";
            s.executeUpdate(columns + "CONCAT('hist-', MOD(g.n, " + QUEUES + ")), CONCAT('k', MOD(g.n * 7, 5)),"
                    + " CASE WHEN MOD(g.n, 100) < 90 THEN 'SUCCEEDED' WHEN MOD(g.n, 100) < 97 THEN 'FAILED'"
                    + " ELSE 'CANCELLED' END, 1, 3, 'FIXED', 1000, 1000, 1.0, 0.0, now(), now(), now(), now(),"
                    + " (floor(extract(epoch FROM now()) / 86400))::INTEGER"
                    + " FROM generate_series(1, " + HISTORY + ") AS g(n)");
            s.executeUpdate(columns + "'backlog', CONCAT('k', MOD(g.n, 5)), 'PENDING', 0, 3, 'FIXED', 1000, 1000,"
                    + " 1.0, 0.0, now(), now(), now(), NULL, 0 FROM generate_series(1, " + BACKLOG + ") AS g(n)");
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
    void theBacklogIsClaimedThroughTheClaimIndexInClaimOrder() throws SQLException {
        PostgresDialect dialect = new PostgresDialect();
        Claimable kinds = new Claimable(List.of("k0", "k1", "k2", "k3", "k4"), null);
        String claim = "SELECT id FROM dbtasks_task WHERE " + dialect.dueCondition(kinds) + " ORDER BY "
                + Dialect.CLAIM_ORDER + " LIMIT ? FOR UPDATE SKIP LOCKED";
        String plan = PostgresPlans.explain(claim, ps -> ps.setInt(dialect.bindDue(ps, 1, "backlog", kinds), 250));
        assertThat(plan).as(plan).contains("Index Scan using dbtasks_task_live_claim_idx on dbtasks_task_live");
        assertThat(plan)
                .as(plan)
                .doesNotContain("Sort")
                .doesNotContain("Bitmap")
                .doesNotContain("Append");
    }
}
