package io.dbtasks.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The history loader writes finished tasks and attempts in the stated proportions and time spread,
 * the history scenario at smoke size reports both burn-downs, every read and a retention sweep that
 * removed the oldest day, the migration scenario upgrades a history, and the queue-retention scenario
 * reports its sweeps. No timing is asserted.
 */
class HistoryScenarioTest {
    private static final String H2_URL = "jdbc:h2:mem:dbtasks_bench_history;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";

    @TempDir
    Path out;

    private TestDatabase db;

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void loaderWritesFinishedTasksAndAttemptsInProportion(TestDatabase db) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        this.db = db;
        DataSource ds = db.dataSource();
        DbTasks.builder(ds).workers(false).build().close();
        db.clear();

        long attempts = new HistoryLoader(ds, Database.of(db.url())).load(1000);

        assertThat(attempts).as("900 + 90 retried successes + 3 x 70 failures").isEqualTo(1200);
        assertThat(count(ds, "SELECT COUNT(*) FROM dbtasks_attempt")).isEqualTo(1200);
        assertThat(count(ds, "SELECT COUNT(*) FROM dbtasks_task WHERE status = 'SUCCEEDED'"))
                .isEqualTo(900);
        assertThat(count(ds, "SELECT COUNT(*) FROM dbtasks_task WHERE status = 'FAILED' AND last_error IS NOT NULL"))
                .isEqualTo(70);
        assertThat(count(ds, "SELECT COUNT(*) FROM dbtasks_task WHERE status = 'CANCELLED' AND attempt = 0"))
                .isEqualTo(30);
        assertThat(count(ds, "SELECT COUNT(DISTINCT queue) FROM dbtasks_task")).isEqualTo(HistoryLoader.QUEUES);
        assertThat(count(ds, "SELECT COUNT(DISTINCT kind) FROM dbtasks_task")).isEqualTo(HistoryLoader.KINDS);
        assertThat(count(ds, "SELECT COUNT(*) FROM dbtasks_task WHERE idempotency_key IS NOT NULL"))
                .isEqualTo(200);
        assertThat(count(ds, "SELECT COUNT(*) FROM dbtasks_task WHERE reference IS NOT NULL"))
                .isEqualTo(333);
        assertThat(count(
                        ds,
                        "SELECT COUNT(*) FROM dbtasks_attempt a JOIN dbtasks_task t ON t.id = a.task_id"
                                + " WHERE a.attempt = t.attempt AND a.outcome <> t.status"))
                .as("the last attempt carries the task's outcome")
                .isZero();
        Database d = Database.of(db.url());
        assertThat(count(ds, "SELECT COUNT(*) FROM dbtasks_task WHERE finished_at < " + d.secondsAgo("29 * 86400")))
                .as("the oldest of 30 days")
                .isBetween(30L, 37L);
        assertThat(count(ds, "SELECT COUNT(*) FROM dbtasks_task WHERE finished_at > " + d.secondsAgo("86400")))
                .as("the newest of 30 days")
                .isBetween(30L, 37L);
    }

    @Test
    void theFinishesSpanThirtyDaysAtAnySize() {
        assertThat(HistoryLoader.stepMillis(1000)).isEqualTo("2592000");
        assertThat(HistoryLoader.stepMillis(100_000_000)).isEqualTo("25.920");
        assertThat(HistoryLoader.stepMillis(30_000_000)).isEqualTo("86.400");
        assertThat(HistoryLoader.stepMillis(7)).isEqualTo("370285714.286");
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void smokeRunReportsBurnDownsReadsAndRetention(TestDatabase db) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        this.db = db;
        List<String> rows = run(db, "history", "--smoke");
        assertThat(rows).filteredOn(l -> l.contains("\"history=0 W=")).hasSize(1);
        assertThat(rows).filteredOn(l -> l.contains("of empty history")).hasSize(1);
        assertThat(rows).filteredOn(l -> l.contains("overview: stateCounts()")).hasSize(1);
        assertThat(rows)
                .filteredOn(l -> l.contains("overview right after the burn-down"))
                .hasSize(1);
        assertThat(rows).filteredOn(l -> l.contains("list: ")).hasSize(3);
        assertThat(rows).filteredOn(l -> l.contains("count: ")).hasSize(1);
        String retention = rows.stream()
                .filter(l -> l.contains("retention of 1 of"))
                .findFirst()
                .orElseThrow();
        Matcher m = Pattern.compile("(\\d+) tasks deleted").matcher(retention);
        assertThat(m.find()).as(retention).isTrue();
        if (db == TestDatabase.H2) {
            assertThat(Long.parseLong(m.group(1)))
                    .as("about a thirtieth of 2,000 tasks")
                    .isBetween(60L, 75L);
        } else {
            // History partitioned by day goes by whole days: the oldest day holds the tasks that
            // finished between 30 days ago and its end, a share of 2,000 by the time of day.
            long secondsOfDay = java.time.Instant.now().getEpochSecond() % 86_400;
            long expected = Math.round(2_000 * (86_400 - secondsOfDay) / (30.0 * 86_400));
            assertThat(Long.parseLong(m.group(1)))
                    .as("the tasks of the oldest, partly filled day of 2,000 over 30 days")
                    .isBetween(expected - 8, expected + 8);
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = TestDatabase.class,
            names = {"POSTGRESQL", "MARIADB"})
    void migrationScenarioUpgradesAHistoryAndReportsWhereItWent(TestDatabase db) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        String row = run(db, "migration", "--history-tasks", "2000").get(0);
        assertThat(row).contains("2000 finished tasks (+2400 attempts), 10000 PENDING");
        assertThat(row).contains("live 10000");
        Matcher history = Pattern.compile("(by day|from before) (\\d+)").matcher(row);
        long finished = 0;
        while (history.find()) {
            finished += Long.parseLong(history.group(2));
        }
        assertThat(finished).as(row).isEqualTo(2000);
        if (db == TestDatabase.POSTGRESQL) {
            assertThat(row)
                    .as("PostgreSQL keeps the old rows as the partition of day -1")
                    .contains("from before 2000");
        }
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void queueRetentionScenarioTimesTwoSweepsPerRoundThatDeleteNothing(TestDatabase db) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        this.db = db;
        List<String> rows = run(db, "queue-retention", "--history-tasks", "2000");
        assertThat(rows).hasSize(2 * QueueRetentionScenario.ROUNDS);
        for (int i = 0; i < rows.size(); i++) {
            assertThat(rows.get(i)).contains(i % 2 == 0 ? QueueRetentionScenario.FIRST : QueueRetentionScenario.NEXT);
        }
        assertThat(rows)
                .as("the queue kept shorter has no rows, and the rest are kept longer than the history spans")
                .allMatch(r -> r.contains("history=2000") && r.contains(": 0 deleted"));
    }

    /**
     * Runs one scenario on {@code db} (a test database of its own on H2) with {@code --wipe}.
     *
     * @return the scenario's rows of the results CSV, in order
     */
    private List<String> run(TestDatabase db, String scenario, String... options) throws Exception {
        List<String> args = new java.util.ArrayList<>(
                List.of("--url", db == TestDatabase.H2 ? H2_URL : db.url(), "--scenario", scenario, "--wipe", "--out"));
        args.add(out.toString());
        args.addAll(List.of(options));
        assertThat(BenchCommand.execute(args.toArray(String[]::new))).isZero();
        String id = db.name().toLowerCase(Locale.ROOT);
        return Files.readAllLines(out.resolve("results-" + id + ".csv"), StandardCharsets.UTF_8).stream()
                .filter(l -> l.startsWith(scenario + ","))
                .toList();
    }

    @AfterEach
    void clear() {
        if (db != null) {
            db.clear();
        }
    }

    private static long count(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
