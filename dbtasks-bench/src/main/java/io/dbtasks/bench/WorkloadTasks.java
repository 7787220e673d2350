package io.dbtasks.bench;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Bulk inserts of due PENDING tasks into any queue, with any kind and retry policy, for the workload
 * scenarios and the child JVMs' warm-up ({@link TaskTable} inserts only the bench queue's no-op tasks
 * with the default policy).
 */
final class WorkloadTasks {
    /** The default retry policy as the engine stores it: exponential from 1 s by 2 to 10 min, jitter 0.2. */
    static final String DEFAULT_BACKOFF = "'EXPONENTIAL', 1000, 600000, 2.0, 0.2";

    private WorkloadTasks() {}

    /** @return a fixed backoff of {@code millis} without jitter, as {@code RetryPolicy.fixed} stores it */
    static String fixedBackoff(long millis) {
        return "'FIXED', " + millis + ", " + millis + ", 1.0, 0.0";
    }

    /**
     * Inserts {@code n} due PENDING tasks with three attempts.
     *
     * @param backoff the five backoff columns as SQL literals, e.g. {@link #fixedBackoff(long)}
     */
    static void insert(BenchRun run, String queue, String kind, long n, String backoff) throws SQLException {
        Database db = run.db();
        String now = db.now();
        long chunk = 100_000;
        try (Connection c = run.admin().getConnection();
                Statement s = c.createStatement()) {
            for (long done = 0; done < n; done += chunk) {
                long rows = Math.min(chunk, n - done);
                s.executeUpdate(
                        "INSERT INTO dbtasks_task (queue, kind, status, priority, attempt, max_attempts, backoff,"
                                + " backoff_initial_ms, backoff_max_ms, backoff_multiplier, backoff_jitter, run_at, created_at,"
                                + " updated_at, started_at, finished_at) SELECT '" + queue + "', '" + kind
                                + "', 'PENDING', 0, 0, 3, " + backoff + ", " + now + ", " + now + ", " + now
                                + ", NULL, NULL FROM " + db.rows(rows));
            }
        }
        run.tasks().analyze();
    }

    /** Deletes the tasks of {@code queue}, their idempotency keys and their attempts. */
    static void delete(BenchRun run, String queue) throws SQLException {
        try (Connection c = run.admin().getConnection();
                Statement s = c.createStatement()) {
            s.executeUpdate("DELETE FROM dbtasks_attempt WHERE queue = '" + queue + "'");
            s.executeUpdate("DELETE FROM dbtasks_task_key WHERE idempotency_key IN (SELECT idempotency_key FROM"
                    + " dbtasks_task WHERE queue = '" + queue + "' AND idempotency_key IS NOT NULL)");
            s.executeUpdate("DELETE FROM dbtasks_task WHERE queue = '" + queue + "'");
        }
    }
}
