package io.dbtasks.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;

/**
 * Plain SQL on the dbtasks tables for setting up and checking measurements: bulk inserts of pending
 * tasks and of finished history from a row generator (so a million rows take seconds, not the
 * minutes one INSERT per task would), counts, truncation and retention deletes. Rows look as the
 * engine writes them, with the default retry policy.
 */
final class TaskTable {
    /** The queue every bench task goes to. */
    static final String QUEUE = "bench";
    /** The kind of the no-op task. */
    static final String KIND = "bench.noop";
    /** Finished history spreads over this many seconds (40 days) into the past. */
    static final long HISTORY_SPAN_SECONDS = 40L * 24 * 3600;
    /** Retention deletes SUCCEEDED rows finished longer ago than this (30 days). */
    static final long RETENTION_SECONDS = 30L * 24 * 3600;

    private static final String COLUMNS = "queue, kind, status, priority, attempt, max_attempts, backoff,"
            + " backoff_initial_ms, backoff_max_ms, backoff_multiplier, backoff_jitter, run_at, created_at, updated_at,"
            + " started_at, finished_at";

    private final DataSource dataSource;
    private final Database db;

    TaskTable(DataSource dataSource, Database db) {
        this.dataSource = dataSource;
        this.db = db;
    }

    /**
     * Refuses to go on if the table holds tasks of queues other than the bench's, unless {@code
     * wipe}: every scenario truncates it.
     */
    void requireDedicated(boolean wipe) throws SQLException {
        long foreign = count("queue NOT LIKE 'bench%'");
        if (foreign > 0 && !wipe) {
            throw new IllegalStateException("dbtasks_task holds " + foreign + " task(s) of other queues, and the"
                    + " benchmark truncates the table: point --url at a dedicated database (e.g. dbtasks_bench)"
                    + " or pass --wipe");
        }
    }

    /** Deletes every task and attempt, and the hourly counts of finished tasks with them. */
    void reset() throws SQLException {
        List<String> sql = db == Database.POSTGRESQL
                ? List.of("TRUNCATE dbtasks_task, dbtasks_attempt, dbtasks_history_count, dbtasks_history_hour")
                : List.of(
                        "TRUNCATE TABLE dbtasks_attempt",
                        "TRUNCATE TABLE dbtasks_task",
                        "TRUNCATE TABLE dbtasks_history_count",
                        "TRUNCATE TABLE dbtasks_history_hour");
        execute(sql);
    }

    /**
     * PostgreSQL: {@code VACUUM (ANALYZE)} of the live partition, what a running engine's vacuum check
     * does within its interval once a burn-down has left its dead rows there. Elsewhere nothing
     * (MariaDB purges on its own; H2 needs nothing).
     */
    void vacuumLive() throws SQLException {
        if (db == Database.POSTGRESQL) {
            execute(List.of("VACUUM (ANALYZE) dbtasks_task_live"));
        }
    }

    /** Inserts {@code n} due PENDING no-op tasks into {@link #QUEUE}. */
    void insertPending(long n) throws SQLException {
        insert(
                n,
                "'PENDING', 0, 0, 3, 'EXPONENTIAL', 1000, 600000, 2.0, 0.2, " + db.now() + ", " + db.now() + ", "
                        + db.now() + ", NULL, NULL");
    }

    /**
     * Inserts {@code n} due PENDING no-op tasks into {@link #QUEUE}, spread over {@code keys}
     * concurrency keys {@code prefix0}, {@code prefix1}... (task i gets key i modulo {@code keys}, so
     * the keys interleave in enqueue order).
     */
    void insertPendingKeyed(long n, int keys, String prefix) throws SQLException {
        insertWithKey(
                n,
                "'PENDING', 0, 0, 3, 'EXPONENTIAL', 1000, 600000, 2.0, 0.2, " + db.now() + ", " + db.now() + ", "
                        + db.now() + ", NULL, NULL",
                "CONCAT('" + prefix + "', MOD(n, " + keys + "))");
    }

    /**
     * Inserts one RUNNING task of key {@code key} whose lease ends in a day, so that the key stays at a
     * limit of 1 and its PENDING tasks wait behind it.
     */
    void insertHolder(String key) throws SQLException {
        execute(List.of("INSERT INTO dbtasks_task (" + COLUMNS + ", concurrency_key, lease_owner, lease_token,"
                + " lease_expires_at) SELECT '" + QUEUE + "', '" + KIND + "', 'RUNNING', 0, 1, 3, 'EXPONENTIAL', 1000,"
                + " 600000, 2.0, 0.2, " + db.now() + ", " + db.now() + ", " + db.now() + ", " + db.now() + ", NULL, '"
                + key + "', 'bench-holder', 1, " + db.secondsAgo("-86400") + " FROM " + db.rows(1)));
    }

    /**
     * Inserts {@code n} RUNNING tasks without a key into {@code queue}, leased for a day, so that they
     * stay RUNNING (no engine claims from that queue, and the rescue does not reach them) while
     * another queue burns down.
     */
    void insertRunning(long n, String queue) throws SQLException {
        execute(List.of("INSERT INTO dbtasks_task (" + COLUMNS + ", lease_owner, lease_token, lease_expires_at)"
                + " SELECT '" + queue + "', '" + KIND + "', 'RUNNING', 0, 1, 3, 'EXPONENTIAL', 1000, 600000, 2.0, 0.2, "
                + db.now() + ", " + db.now() + ", " + db.now() + ", " + db.now() + ", NULL, 'bench-holder', 1, "
                + db.secondsAgo("-86400") + " FROM " + db.rows(n)));
        analyze();
    }

    /**
     * Inserts {@code n} SUCCEEDED tasks finished up to {@link #HISTORY_SPAN_SECONDS} ago, a quarter of
     * them older than the retention period.
     */
    void insertHistory(long n) throws SQLException {
        // n times a prime coprime with the span, modulo the span: ages spread evenly however small n is.
        String finished = db.secondsAgo("MOD(n * 104729, " + HISTORY_SPAN_SECONDS + ")");
        insert(
                n,
                "'SUCCEEDED', 0, 1, 3, 'EXPONENTIAL', 1000, 600000, 2.0, 0.2, " + finished + ", " + finished + ", "
                        + finished + ", " + finished + ", " + finished);
    }

    /** Inserts {@code n} SUCCEEDED tasks that finished {@code age} ago, for the retention scenario. */
    void insertOldSucceeded(long n, java.time.Duration age) throws SQLException {
        String finished = db.secondsAgo(Long.toString(age.toSeconds()));
        insert(
                n,
                "'SUCCEEDED', 0, 1, 3, 'EXPONENTIAL', 1000, 600000, 2.0, 0.2, " + finished + ", " + finished + ", "
                        + finished + ", " + finished + ", " + finished);
    }

    private void insertWithKey(long n, String values, String key) throws SQLException {
        long chunk = db == Database.POSTGRESQL ? 500_000 : 100_000;
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            for (long done = 0; done < n; done += chunk) {
                long rows = Math.min(chunk, n - done);
                s.executeUpdate("INSERT INTO dbtasks_task (" + COLUMNS + ", concurrency_key) SELECT '" + QUEUE + "', '"
                        + KIND + "', " + values + ", " + key + " FROM " + db.rows(rows));
            }
        }
        analyze();
    }

    private void insert(long n, String values) throws SQLException {
        long chunk = db == Database.POSTGRESQL ? 500_000 : 100_000;
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            for (long done = 0; done < n; done += chunk) {
                long rows = Math.min(chunk, n - done);
                s.executeUpdate("INSERT INTO dbtasks_task (" + COLUMNS + ") SELECT '" + QUEUE + "', '" + KIND + "', "
                        + values + " FROM " + db.rows(rows));
            }
        }
        analyze();
    }

    /** Refreshes planner statistics after a bulk change, as autovacuum or InnoDB would soon do. */
    void analyze() throws SQLException {
        switch (db) {
            case POSTGRESQL -> execute(List.of("ANALYZE dbtasks_task"));
            case MARIADB -> {
                try (Connection c = dataSource.getConnection();
                        Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("ANALYZE TABLE dbtasks_task")) {
                    while (rs.next()) {
                        // ANALYZE TABLE answers with a status row
                    }
                }
            }
            case H2 -> execute(List.of("ANALYZE TABLE dbtasks_task"));
        }
    }

    /**
     * Brings a bulk-loaded table to the state a table that grew over time would be in before it is
     * measured. PostgreSQL: {@code VACUUM (ANALYZE)} (the visibility map and hint bits autovacuum
     * would have set) and a {@code CHECKPOINT}, so the WAL of the load does not force a checkpoint,
     * and full-page images of every page touched first after it, into the measured run. The
     * checkpoint needs superuser or {@code pg_checkpoint}; without it the step is skipped with a note.
     * Elsewhere: {@link #analyze()}.
     */
    void settle() throws SQLException {
        if (db != Database.POSTGRESQL) {
            analyze();
            return;
        }
        execute(List.of("VACUUM (ANALYZE) dbtasks_task"));
        try {
            execute(List.of("CHECKPOINT"));
        } catch (SQLException e) {
            Log.line("scale: CHECKPOINT refused (" + e.getMessage() + "); measuring without it");
        }
    }

    /**
     * Counts one state at a time, each state inlined, so that PostgreSQL reads its partial index
     * (claim, rescue) instead of the whole table: a burn-down beside ten million finished rows would
     * otherwise time a sequential scan of its own drain check.
     *
     * @return tasks of the bench queue that are PENDING or RUNNING
     */
    long open() throws SQLException {
        return count("queue = '" + QUEUE + "' AND status = 'PENDING'")
                + count("queue = '" + QUEUE + "' AND status = 'RUNNING'");
    }

    /** @return SUCCEEDED tasks */
    long succeeded() throws SQLException {
        return count("status = 'SUCCEEDED'");
    }

    /** @return tasks matching {@code where} */
    long count(String where) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM dbtasks_task WHERE " + where)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Deletes up to {@code limit} SUCCEEDED tasks older than the retention period; @return how many */
    int deleteExpired(int limit) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            return s.executeUpdate(db.deleteFinishedBefore(db.secondsAgo(String.valueOf(RETENTION_SECONDS)), limit));
        }
    }

    /** Waits until the bench queue has nothing PENDING or RUNNING, polling every {@code pollMillis}. */
    void awaitDrained(long pollMillis, long timeoutMillis) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (open() > 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "bench queue not drained after " + timeoutMillis + " ms; " + open() + " task(s) still open");
            }
            Thread.sleep(pollMillis);
        }
    }

    private void execute(List<String> statements) throws SQLException {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        }
    }
}
