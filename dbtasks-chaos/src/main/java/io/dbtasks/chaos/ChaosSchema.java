package io.dbtasks.chaos;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import javax.sql.DataSource;

/**
 * The chaos suite's own tables, beside the dbtasks tables. None has a unique constraint: a task
 * whose effect was written twice shows up as two rows, and the checker counts them.
 *
 * <ul>
 *   <li>{@code chaos_effect}: one row per run of a transactional task, written by a {@link
 *       io.dbtasks.TransactionalTaskHandler} in the engine's transaction, so it must exist exactly
 *       once per SUCCEEDED task;
 *   <li>{@code chaos_plain_effect}: one row per run of a plain task, written on a connection of the
 *       handler's own, so a task run again after a lost lease may write it twice (at least once);
 *   <li>{@code chaos_interval}: in the limits workload, one row per run of a handler, written on a
 *       connection of the handler's own when it returns (so a run whose effect the fencing token
 *       refused is there too), with its start and end by the database clock (microseconds since the
 *       epoch); the effect row of {@code chaos_effect} carries the same interval, and only if the run
 *       committed;
 *   <li>{@code chaos_lock_counter}, {@code chaos_lock_history}, {@code chaos_lock_log}: the lock
 *       workload ({@link LockWorker}).
 * </ul>
 */
public final class ChaosSchema {
    /** The queue of the chaos tasks. */
    public static final String QUEUE = "chaos";
    /** The kind whose effect is transactional. */
    public static final String TX_KIND = "chaos.tx";
    /** The kind whose effect is written outside the engine's transaction. */
    public static final String PLAIN_KIND = "chaos.plain";

    private ChaosSchema() {}

    /**
     * Drops and creates the chaos tables.
     *
     * @param ds the database
     * @throws SQLException if a statement fails
     */
    public static void recreate(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            for (String t : List.of(
                    "chaos_effect",
                    "chaos_plain_effect",
                    "chaos_interval",
                    "chaos_lock_counter",
                    "chaos_lock_history",
                    "chaos_lock_log")) {
                try {
                    s.executeUpdate("DROP TABLE " + t);
                } catch (SQLException absent) {
                    // first run
                }
            }
            for (String t : List.of("chaos_effect", "chaos_plain_effect", "chaos_interval")) {
                s.executeUpdate("CREATE TABLE " + t
                        + " (task_id BIGINT NOT NULL, token BIGINT NOT NULL, worker VARCHAR(200) NOT NULL,"
                        + " started_us BIGINT, ended_us BIGINT)");
            }
            s.executeUpdate("CREATE TABLE chaos_lock_counter (id INT PRIMARY KEY, n BIGINT NOT NULL,"
                    + " last_token BIGINT NOT NULL)");
            s.executeUpdate("INSERT INTO chaos_lock_counter (id, n, last_token) VALUES (1, 0, 0)");
            // seq: the commit order (writes are serialised by the counter row's lock)
            s.executeUpdate("CREATE TABLE chaos_lock_history (seq BIGINT NOT NULL, token BIGINT NOT NULL,"
                    + " process VARCHAR(100) NOT NULL)");
            s.executeUpdate("CREATE TABLE chaos_lock_log (token BIGINT NOT NULL, process VARCHAR(100) NOT NULL,"
                    + " granted_us BIGINT NOT NULL, work_end_us BIGINT NOT NULL, accepted INT NOT NULL,"
                    + " reported INT NOT NULL)");
        }
    }
}
