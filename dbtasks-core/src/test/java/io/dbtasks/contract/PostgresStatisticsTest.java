package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL only: every column of the task table's live partition has the statistics target 10
 * (migrations V14, V30) and the statistics of (queue, status) together the target 50 (V29, V30), so
 * an ANALYZE of it, which the engine runs while its queues are busy, samples 15,000 rows instead of
 * the default 30,000, and still sees every status that holds a real share of it.
 */
class PostgresStatisticsTest extends EngineHarness {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Test
    void everyColumnOfTheLivePartitionHasTheSmallTarget() {
        producer(); // migrates
        assertThat(count("SELECT COUNT(*) FROM pg_attribute WHERE attrelid = 'dbtasks_task_live'::regclass"
                        + " AND attnum > 0 AND NOT attisdropped"))
                .isGreaterThan(20);
        assertThat(count("SELECT COUNT(*) FROM pg_attribute WHERE attrelid = 'dbtasks_task_live'::regclass"
                        + " AND attnum > 0 AND NOT attisdropped AND COALESCE(attstattarget, -1) <> 10"))
                .as("columns of dbtasks_task_live left at the default statistics target (a later migration must"
                        + " set 10 on the columns it adds)")
                .isZero();
    }

    @Test
    void analyzeSamplesFifteenThousandRowsAndSeesEveryStatus() throws Exception {
        DbTasks tasks = producer();
        tasks.enqueueAll(IntStream.range(0, 20_000)
                .mapToObj(i -> TaskRequest.builder("stats.sample").build())
                .toList());
        // A tenth of them cancelled: a status with a tenth of the rows must be in the statistics.
        assertThat(sql("UPDATE dbtasks_task SET status = 'CANCELLED', finished_at = updated_at"
                        + " WHERE kind = 'stats.sample' AND MOD(id, 10) = 0"))
                .isBetween(1_900, 2_100);
        List<String> messages = new ArrayList<>();
        try (Connection c = database().dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("ANALYZE VERBOSE dbtasks_task_live");
            for (SQLWarning w = s.getWarnings(); w != null; w = w.getNextWarning()) {
                messages.add(w.getMessage());
            }
        }
        assertThat(messages).anySatisfy(m -> assertThat(m).contains("15000 rows in sample"));
        assertThat(
                        count(
                                "SELECT COUNT(*) FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'dbtasks_task_live'"
                                        + " AND attname = 'status'"
                                        + " AND most_common_vals::text LIKE '%PENDING%' AND most_common_vals::text LIKE '%CANCELLED%'"))
                .isEqualTo(1);
    }
}
