package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskFilter;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL only: a working engine vacuums the task table once it holds many dead rows, and
 * refreshes its statistics once it outgrows them.
 */
class PostgresVacuumTest extends EngineHarness {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    private long vacuums() throws Exception {
        try (Connection c = database().dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT vacuum_count FROM pg_stat_user_tables"
                        + " WHERE relid = 'dbtasks_task_live'::regclass")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private long statisticsPages() throws Exception {
        try (Connection c = database().dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs =
                        s.executeQuery("SELECT relpages FROM pg_class WHERE oid = 'dbtasks_task_live'::regclass")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private void execute(String sql) throws Exception {
        try (Connection c = database().dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    @Test
    void aTaskTableThatOutgrowsItsStatisticsIsAnalyzedSoon() throws Exception {
        // Empty, with statistics of an empty table: what a new install or a truncated table looks like.
        execute("TRUNCATE dbtasks_task CASCADE");
        execute("ANALYZE dbtasks_task_live");
        assertThat(statisticsPages()).isZero();
        // Works another queue, so the backlog below stays; vacuum (dead rows) is not what this tests.
        DbTasks tasks = engine(b -> b.queue("elsewhere", 1)
                .vacuumInterval(Duration.ofMinutes(5))
                .handler("noop", Void.class, (ctx, p) -> {}));
        tasks.start();
        Thread.sleep(1_500); // three of its statistics checks (every 500 ms)
        assertThat(statisticsPages())
                .as("an empty table is not analyzed again and again")
                .isZero();

        List<TaskRequest> batch = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            batch.add(TaskRequest.of("noop", null));
        }
        tasks.enqueueAll(batch);
        // ANALYZE is what sets relpages here: nothing has vacuumed the table, and autovacuum's naptime is
        // a minute; the engine looks every 500 ms.
        await().atMost(Duration.ofSeconds(5)).until(() -> statisticsPages() > 64);
    }

    @Test
    void churnedTaskTableIsVacuumedByAnEngine() throws Exception {
        DbTasks tasks = engine(b -> b.queue("default", 32)
                .vacuumInterval(Duration.ofMillis(300))
                .handler("noop", Void.class, (ctx, p) -> {}));
        List<TaskRequest> batch = new ArrayList<>();
        for (int i = 0; i < 12_000; i++) {
            batch.add(TaskRequest.of("noop", null));
        }
        tasks.enqueueAll(batch);
        long before = vacuums();
        tasks.start();
        await().atMost(Duration.ofSeconds(60))
                .until(() -> tasks.list(new TaskFilter(TaskStatus.SUCCEEDED, null, null), 0, 1)
                                .total()
                        == 12_000);
        // 12,000 claims and completions left dead row versions, over the 10,000 threshold; vacuum_count
        // counts explicit VACUUMs only, so autovacuum cannot pass this test.
        await().atMost(Duration.ofSeconds(30)).until(() -> vacuums() > before);
    }
}
