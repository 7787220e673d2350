package io.dbtasks.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code --smoke} runs every scenario with tiny sizes on each test database and writes a CSV with
 * rows for every scenario, each with a positive throughput. No timing is asserted: the figures of a
 * smoke run on a shared CI machine mean nothing; that they are produced does.
 */
class BenchSmokeTest {
    private static final String H2_URL = "jdbc:h2:mem:dbtasks_bench_smoke;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";

    @TempDir
    Path out;

    private TestDatabase db;

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void smokeRunWritesEveryScenarioWithPositiveThroughput(TestDatabase db) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        this.db = db;
        boolean server = db != TestDatabase.H2;
        // The run's stderr goes to the console as usual and, kept, into the failure message: a
        // scenario that throws is then named in the test report, not only in the console log.
        java.io.ByteArrayOutputStream errors = new java.io.ByteArrayOutputStream();
        java.io.PrintStream console = System.err;
        System.setErr(new java.io.PrintStream(new TeeStream(console, errors), true, StandardCharsets.UTF_8));
        int code;
        try {
            code = BenchCommand.execute(
                    "--url",
                    server ? db.url() : H2_URL,
                    "--smoke",
                    "--wipe", // the test database holds other tests' tasks
                    "--processes",
                    server ? "1,2" : "1",
                    "--out",
                    out.toString());
        } finally {
            System.setErr(console);
        }

        String stderr = errors.toString(StandardCharsets.UTF_8);
        assertThat(code)
                .as("exit code; stderr ends with:%n%s", stderr.substring(Math.max(0, stderr.length() - 6000)))
                .isZero();
        String id = db.name().toLowerCase(Locale.ROOT);
        List<String> lines = Files.readAllLines(out.resolve("results-" + id + ".csv"), StandardCharsets.UTF_8);
        assertThat(lines.get(0)).isEqualTo(String.join(",", Report.COLUMNS));
        Set<String> scenarios = new TreeSet<>();
        for (String line : lines.subList(1, lines.size())) {
            List<String> cells = cells(line);
            assertThat(cells).as(line).hasSize(Report.COLUMNS.size());
            assertThat(cells.get(1)).isEqualTo(id);
            assertThat(Double.parseDouble(cells.get(5))).as(line).isPositive();
            scenarios.add(cells.get(0));
        }
        assertThat(scenarios).containsExactlyInAnyOrderElementsOf(BenchConfig.ALL);
        assertThat(lines)
                .as("the ceiling's best point rerun with attempt rows")
                .anyMatch(l -> l.startsWith("ceiling,") && l.contains("with attempt rows"));
        if (server) {
            assertThat(lines).anyMatch(l -> l.startsWith("burndown,") && l.contains("P=2"));
        }
        assertThat(out.resolve("throughput-" + id + ".png")).isNotEmptyFile();
        assertThat(out.resolve("latency-" + id + ".png")).isNotEmptyFile();
    }

    /** The bench truncates the task tables at its end; the peers' tables are ours to drop. */
    @AfterEach
    void dropPeerTable() throws Exception {
        if (db == null || db == TestDatabase.H2) {
            return;
        }
        db.clear();
        try (Connection c = db.dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS scheduled_tasks");
            s.execute("DROP VIEW IF EXISTS jobrunr_jobs_stats");
            for (String table : List.of(
                    "jobrunr_jobs",
                    "jobrunr_recurring_jobs",
                    "jobrunr_backgroundjobservers",
                    "jobrunr_metadata",
                    "jobrunr_migrations",
                    "QRTZ_FIRED_TRIGGERS",
                    "QRTZ_PAUSED_TRIGGER_GRPS",
                    "QRTZ_SCHEDULER_STATE",
                    "QRTZ_LOCKS",
                    "QRTZ_SIMPLE_TRIGGERS",
                    "QRTZ_CRON_TRIGGERS",
                    "QRTZ_SIMPROP_TRIGGERS",
                    "QRTZ_BLOB_TRIGGERS",
                    "QRTZ_TRIGGERS",
                    "QRTZ_JOB_DETAILS",
                    "QRTZ_CALENDARS")) {
                s.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    /** Writes to two streams. */
    private static final class TeeStream extends java.io.OutputStream {
        private final java.io.OutputStream a;
        private final java.io.OutputStream b;

        TeeStream(java.io.OutputStream a, java.io.OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public synchronized void write(int x) throws java.io.IOException {
            a.write(x);
            b.write(x);
        }

        @Override
        public synchronized void write(byte[] bytes, int off, int len) throws java.io.IOException {
            a.write(bytes, off, len);
            b.write(bytes, off, len);
        }

        @Override
        public void flush() throws java.io.IOException {
            a.flush();
        }
    }

    /** Splits a CSV line on commas outside double quotes. */
    private static List<String> cells(String line) {
        List<String> cells = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        boolean quoted = false;
        for (char ch : line.toCharArray()) {
            if (ch == '"') {
                quoted = !quoted;
            } else if (ch == ',' && !quoted) {
                cells.add(cell.toString());
                cell.setLength(0);
            } else {
                cell.append(ch);
            }
        }
        cells.add(cell.toString());
        return cells;
    }
}
