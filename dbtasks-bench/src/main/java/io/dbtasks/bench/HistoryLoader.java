package io.dbtasks.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Loads finished history straight into the task and attempt tables with set-based SQL (a row
 * generator and {@code INSERT ... SELECT} in chunks), so ten million tasks take minutes, not the
 * days running them would. The rows look as the engine leaves them:
 *
 * <ul>
 *   <li>task {@code n} (1 to N) finished {@code (N - n) x span / N} ago, so ids grow with time as
 *       they do in a table that filled over {@link #SPAN_DAYS} days;
 *   <li>90% SUCCEEDED (one in ten on its second attempt), 7% FAILED after 3 attempts with an error,
 *       3% CANCELLED before they ran (no attempt);
 *   <li>{@link #QUEUES} queues {@code bench-h0..}, {@link #KINDS} kinds {@code bench.h0..}; one task
 *       in five has an idempotency key, one in three a reference;
 *   <li>one attempt row per attempt, the last one with the task's outcome, earlier ones FAILED.
 * </ul>
 *
 * The queues start with {@code bench} so the harness's dedicated-table check accepts them.
 */
final class HistoryLoader {
    /** History spreads over this many days of finished_at. */
    static final int SPAN_DAYS = 30;
    /** Queues the history is spread over. */
    static final int QUEUES = 4;
    /** Kinds the history is spread over. */
    static final int KINDS = 5;

    private static final long SPAN_MILLIS = SPAN_DAYS * 24L * 3600 * 1000;

    private final DataSource dataSource;
    private final Database db;

    HistoryLoader(DataSource dataSource, Database db) {
        this.dataSource = dataSource;
        this.db = db;
    }

    /** @return the queue of history task {@code i} (0-based: {@code bench-h0}...) */
    static String queue(int i) {
        return "bench-h" + i;
    }

    /**
     * {@link #load} with a log line of what was loaded and how long it took.
     *
     * @param n tasks, at least 1
     * @param scenario the scenario's name, to start the log line
     * @return the attempt rows inserted
     */
    long loadLogged(long n, String scenario) throws SQLException {
        long start = System.nanoTime();
        long attempts = load(n);
        Log.line(String.format(
                java.util.Locale.ROOT,
                "%s: loaded %d tasks and %d attempts in %.1f s",
                scenario,
                n,
                attempts,
                (System.nanoTime() - start) / 1e9));
        return attempts;
    }

    /**
     * Inserts {@code n} finished tasks and their attempts.
     *
     * @param n tasks, at least 1
     * @return the attempt rows inserted
     */
    long load(long n) throws SQLException {
        makeDays();
        long before = maxId("dbtasks_task");
        insertTasks("dbtasks_task", n);
        long after = maxId("dbtasks_task");
        return loadAttempts(before, after, true);
    }

    /**
     * Inserts {@code n} finished tasks, without attempts, into {@code table}, which has the task
     * table's columns.
     *
     * @param table the table to fill
     * @param n tasks, at least 1
     */
    void insertTasks(String table, long n) throws SQLException {
        insertTasks(table, n, true);
    }

    /**
     * Inserts {@code n} finished tasks and their attempts into the tables as they were before history
     * was partitioned by day (no {@code history_day} column, no day partitions to make).
     *
     * @param n tasks, at least 1
     * @return the attempt rows inserted
     */
    long loadBeforePartitions(long n) throws SQLException {
        long before = maxId("dbtasks_task");
        insertTasks("dbtasks_task", n, false);
        long after = maxId("dbtasks_task");
        return loadAttempts(before, after, false);
    }

    /**
     * @param n tasks, at least 1
     * @return the milliseconds between two tasks' finishes, as an SQL literal exact to the
     *     microsecond, so the rows span the whole {@value #SPAN_DAYS} days at any {@code n} (whole
     *     milliseconds would cut 100M rows' span to 28.9 days)
     */
    static String stepMillis(long n) {
        return SPAN_MILLIS % n == 0
                ? Long.toString(SPAN_MILLIS / n)
                : new java.math.BigDecimal(SPAN_MILLIS)
                        .divide(java.math.BigDecimal.valueOf(n), 3, java.math.RoundingMode.HALF_EVEN)
                        .toPlainString();
    }

    private void insertTasks(String table, long n, boolean days) throws SQLException {
        long chunk = db == Database.POSTGRESQL ? 500_000 : 100_000;
        String finished = db.millisAgo("(" + n + " - g.n) * " + stepMillis(n));
        String status = "CASE WHEN MOD(g.n, 100) < 90 THEN 'SUCCEEDED' WHEN MOD(g.n, 100) < 97 THEN 'FAILED'"
                + " ELSE 'CANCELLED' END";
        String attempt = "CASE WHEN MOD(g.n, 100) < 90 THEN (CASE WHEN MOD(g.n, 10) = 3 THEN 2 ELSE 1 END)"
                + " WHEN MOD(g.n, 100) < 97 THEN 3 ELSE 0 END";
        String sql = "INSERT INTO " + table + " (queue, kind, idempotency_key, reference, status, priority, attempt,"
                + " max_attempts, backoff, backoff_initial_ms, backoff_max_ms, backoff_multiplier, backoff_jitter,"
                + " run_at, created_at, updated_at, started_at, finished_at, last_error" + (days ? ", history_day" : "")
                + ") SELECT CONCAT('bench-h', MOD(g.n, " + QUEUES + ")), CONCAT('bench.h', MOD(g.n * 7, " + KINDS
                + ")), CASE WHEN MOD(g.n, 5) = 0 THEN CONCAT('hist-', g.n) END,"
                + " CASE WHEN MOD(g.n, 3) = 0 THEN CONCAT('ref-', MOD(g.n, 100000)) END, " + status + ", 0, "
                + attempt + ", 3, 'EXPONENTIAL', 1000, 600000, 2.0, 0.2, " + finished + ", " + finished + ", "
                + finished + ", " + finished + ", " + finished
                + ", CASE WHEN MOD(g.n, 100) BETWEEN 90 AND 96 THEN 'java.lang.IllegalStateException: bench failure'"
                + " END" + (days ? ", " + db.historyDay(finished) : "") + " FROM ";
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            for (long done = 0; done < n; done += chunk) {
                long to = Math.min(n, done + chunk);
                s.executeUpdate(sql + db.range(done + 1, to));
            }
        }
    }

    /** One attempt row per attempt of the tasks with {@code from < id <= to}. */
    private long loadAttempts(long from, long to, boolean days) throws SQLException {
        long chunk = db == Database.POSTGRESQL ? 500_000 : 100_000;
        long rows = 0;
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            // Ids need not be dense from {@code from}: on PostgreSQL they carry the timeline in their
            // high bits, so the first new id may be 2^40 above the last old one.
            long first;
            try (ResultSet rs = s.executeQuery("SELECT MIN(id) FROM dbtasks_task WHERE id > " + from)) {
                rs.next();
                first = rs.getLong(1);
                if (rs.wasNull()) {
                    return 0;
                }
            }
            for (long lo = first - 1; lo < to; lo += chunk) {
                long hi = Math.min(to, lo + chunk);
                rows += s.executeUpdate("INSERT INTO dbtasks_attempt (task_id, attempt, queue, worker, lease_token,"
                        + " started_at, finished_at, duration_ms, outcome, error_class, error_message"
                        + (days ? ", history_day" : "") + ")"
                        + " SELECT t.id, g.n, t.queue, 'bench-history', t.id, t.finished_at, t.finished_at, 5,"
                        + " CASE WHEN g.n = t.attempt THEN t.status ELSE 'FAILED' END,"
                        + " CASE WHEN g.n < t.attempt OR t.status = 'FAILED' THEN 'java.lang.IllegalStateException'"
                        + " END, CASE WHEN g.n < t.attempt OR t.status = 'FAILED' THEN 'bench failure' END"
                        + (days ? ", t.history_day" : "")
                        + " FROM dbtasks_task t JOIN " + db.range(1, 3) + " ON g.n <= t.attempt"
                        + " WHERE t.id > " + lo + " AND t.id <= " + hi);
            }
        }
        return rows;
    }

    /**
     * Makes the engine's day partitions for the days the history spans, as the engine would have made
     * them ahead while the history accrued: on PostgreSQL with the migration's function, on MariaDB by
     * splitting the earlier days off the first day partition (which holds every day before its bound
     * while the tables are still empty).
     */
    private void makeDays() throws SQLException {
        if (db == Database.H2) {
            return;
        }
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            int today;
            try (ResultSet rs = s.executeQuery("SELECT " + db.historyDay(db.now()))) {
                rs.next();
                today = rs.getInt(1);
            }
            int from = today - SPAN_DAYS - 1;
            if (db == Database.POSTGRESQL) {
                s.executeQuery("SELECT dbtasks_create_history_days(" + from + ", " + today + ")")
                        .close();
                return;
            }
            String first;
            int bound;
            try (ResultSet rs = s.executeQuery(
                    "SELECT PARTITION_NAME, PARTITION_DESCRIPTION FROM"
                            + " information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'dbtasks_task'"
                            + " AND PARTITION_NAME NOT IN ('p_legacy', 'p_live') ORDER BY PARTITION_ORDINAL_POSITION LIMIT 1")) {
                if (!rs.next()) {
                    return;
                }
                first = rs.getString(1);
                bound = Integer.parseInt(rs.getString(2).trim());
            }
            List<String> parts = new ArrayList<>();
            for (int day = from; day < bound - 1; day++) {
                parts.add("PARTITION p"
                        + java.time.LocalDate.ofEpochDay(day).format(java.time.format.DateTimeFormatter.BASIC_ISO_DATE)
                        + " VALUES LESS THAN (" + (day + 1) + ")");
            }
            if (parts.isEmpty()) {
                return;
            }
            parts.add("PARTITION " + first + " VALUES LESS THAN (" + bound + ")");
            for (String table : List.of("dbtasks_task", "dbtasks_attempt")) {
                s.execute("ALTER TABLE " + table + " REORGANIZE PARTITION " + first + " INTO ("
                        + String.join(", ", parts) + ")");
            }
        }
    }

    private long maxId(String table) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COALESCE(MAX(id), 0) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Table and index bytes of the task and attempt tables. PostgreSQL: {@code pg_relation_size} and
     * {@code pg_indexes_size} (TOAST counted with the table), plus dead tuples from {@code
     * pg_stat_user_tables}. MariaDB: {@code information_schema.TABLES} after {@code ANALYZE TABLE}
     * (InnoDB's estimates). H2: none.
     *
     * @return name to value, e.g. {@code task.table} to bytes, in a stable order
     */
    Map<String, Long> sizes() throws SQLException {
        Map<String, Long> sizes = new LinkedHashMap<>();
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            for (String table : List.of("dbtasks_task", "dbtasks_attempt")) {
                String name = table.substring("dbtasks_".length());
                switch (db) {
                    case POSTGRESQL -> {
                        // Summed over the partitions (a partitioned table has no storage of its own).
                        try (ResultSet rs = s.executeQuery("SELECT COALESCE(SUM(pg_table_size(p.relid)), 0),"
                                + " COALESCE(SUM(pg_indexes_size(p.relid)), 0), COALESCE(SUM(st.n_dead_tup), 0)"
                                + " FROM pg_partition_tree('" + table + "') p LEFT JOIN pg_stat_user_tables st"
                                + " ON st.relid = p.relid WHERE p.isleaf")) {
                            rs.next();
                            sizes.put(name + ".table", rs.getLong(1));
                            sizes.put(name + ".indexes", rs.getLong(2));
                            sizes.put(name + ".dead", rs.getLong(3));
                        }
                    }
                    case MARIADB -> {
                        try (ResultSet rs = s.executeQuery("ANALYZE TABLE " + table)) {
                            while (rs.next()) {
                                // a status row
                            }
                        }
                        try (ResultSet rs = s.executeQuery("SELECT data_length, index_length, data_free FROM"
                                + " information_schema.TABLES WHERE table_schema = DATABASE() AND table_name = '"
                                + table + "'")) {
                            rs.next();
                            sizes.put(name + ".table", rs.getLong(1));
                            sizes.put(name + ".indexes", rs.getLong(2));
                            sizes.put(name + ".free", rs.getLong(3));
                        }
                    }
                    case H2 -> {
                        // no size functions worth reporting
                    }
                }
            }
        }
        return sizes;
    }

    /** @return the sizes as {@code task 12.3+4.5 MB, ...}, megabytes of table + indexes */
    static String describe(Map<String, Long> sizes) {
        List<String> parts = new ArrayList<>();
        for (String t : List.of("task", "attempt")) {
            if (sizes.containsKey(t + ".table")) {
                String extra = sizes.containsKey(t + ".dead")
                        ? " dead " + sizes.get(t + ".dead")
                        : sizes.containsKey(t + ".free") ? " free " + mb(sizes.get(t + ".free")) + " MB" : "";
                parts.add(t + " " + mb(sizes.get(t + ".table")) + "+" + mb(sizes.get(t + ".indexes")) + " MB" + extra);
            }
        }
        return parts.isEmpty() ? "sizes n/a" : String.join(", ", parts);
    }

    private static String mb(long bytes) {
        return String.format(java.util.Locale.ROOT, "%.1f", bytes / 1048576.0);
    }
}
