package io.dbtasks.chaos;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Checks a chaos run after the queue drained, in the manner of Jepsen's total-queue checker
 * (jepsen.checker/total-queue): every acknowledged enqueue must come out, nothing may come out that
 * was never enqueued, and here additionally each task's effects and attempts are counted.
 *
 * <p>Figures (all must be 0 except the informational ones):
 *
 * <ul>
 *   <li>{@code lost}: acknowledged keys whose task is missing or not SUCCEEDED;
 *   <li>{@code unexpected}: chaos tasks whose key was never acknowledged nor even attempted;
 *   <li>{@code txDuplicates}: transactional tasks with more than one effect row; {@code txMissing}:
 *       SUCCEEDED transactional tasks with none; {@code txOrphans}: effect rows of tasks not
 *       SUCCEEDED; {@code txTokenMismatch}: effect rows whose token is not the SUCCEEDED attempt's;
 *   <li>{@code badSucceededAttempts}: SUCCEEDED tasks without exactly one SUCCEEDED attempt;
 *   <li>{@code repeatedTokens}: attempt rows sharing a lease token with another attempt row;
 *   <li>informational: {@code plainDuplicates} (plain effects are at least once by design), {@code
 *       rescues} (attempts ended LEASE_EXPIRED), {@code failedAttempts}.
 * </ul>
 */
public final class Checker {
    private Checker() {}

    /**
     * @param ds the chaos database
     * @param attempted every key an enqueue call was made for (acknowledged or not)
     * @param acknowledged the acknowledged keys
     * @return the figures, in a fixed order
     * @throws SQLException if a query fails
     */
    public static Map<String, Long> check(DataSource ds, Set<String> attempted, Set<String> acknowledged)
            throws SQLException {
        Map<String, Long> m = new LinkedHashMap<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            Set<String> succeeded = new HashSet<>();
            long present = 0;
            long unexpected = 0;
            try (ResultSet rs = s.executeQuery(
                    "SELECT idempotency_key, status FROM dbtasks_task WHERE queue = '" + ChaosSchema.QUEUE + "'")) {
                while (rs.next()) {
                    present++;
                    String key = rs.getString(1);
                    if (key == null || !(acknowledged.contains(key) || attempted.contains(key))) {
                        unexpected++;
                    }
                    if ("SUCCEEDED".equals(rs.getString(2))) {
                        succeeded.add(key);
                    }
                }
            }
            long lost =
                    acknowledged.stream().filter(k -> !succeeded.contains(k)).count();
            m.put("acknowledged", (long) acknowledged.size());
            m.put("present", present);
            m.put("succeeded", (long) succeeded.size());
            m.put("lost", lost);
            m.put("unexpected", unexpected);
            m.put(
                    "txDuplicates",
                    one(
                            s,
                            "SELECT COUNT(*) FROM (SELECT task_id FROM chaos_effect GROUP BY task_id"
                                    + " HAVING COUNT(*) > 1) d"));
            m.put(
                    "txMissing",
                    one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_task t WHERE t.queue = '" + ChaosSchema.QUEUE
                                    + "' AND t.kind = '" + ChaosSchema.TX_KIND + "' AND t.status = 'SUCCEEDED'"
                                    + " AND NOT EXISTS (SELECT 1 FROM chaos_effect e WHERE e.task_id = t.id)"));
            m.put(
                    "txOrphans",
                    one(
                            s,
                            "SELECT COUNT(*) FROM chaos_effect e JOIN dbtasks_task t ON t.id = e.task_id"
                                    + " WHERE t.status <> 'SUCCEEDED'"));
            m.put(
                    "txTokenMismatch",
                    one(
                            s,
                            "SELECT COUNT(*) FROM chaos_effect e WHERE NOT EXISTS (SELECT 1 FROM"
                                    + " dbtasks_attempt a WHERE a.task_id = e.task_id AND a.outcome = 'SUCCEEDED'"
                                    + " AND a.lease_token = e.token)"));
            m.put(
                    "badSucceededAttempts",
                    one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_task t WHERE t.queue = '"
                                    + ChaosSchema.QUEUE
                                    + "' AND t.status = 'SUCCEEDED' AND (SELECT COUNT(*) FROM dbtasks_attempt a"
                                    + " WHERE a.task_id = t.id AND a.outcome = 'SUCCEEDED') <> 1"));
            m.put(
                    "repeatedTokens",
                    one(
                            s,
                            "SELECT COALESCE(SUM(n - 1), 0) FROM (SELECT COUNT(*) n FROM"
                                    + " dbtasks_attempt a JOIN dbtasks_task t ON t.id = a.task_id WHERE t.queue = '"
                                    + ChaosSchema.QUEUE + "' GROUP BY a.lease_token HAVING COUNT(*) > 1) d"));
            m.put(
                    "plainDuplicates",
                    one(
                            s,
                            "SELECT COUNT(*) FROM (SELECT task_id FROM chaos_plain_effect"
                                    + " GROUP BY task_id HAVING COUNT(*) > 1) d"));
            m.put(
                    "rescues",
                    one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_attempt a JOIN dbtasks_task t ON t.id = a.task_id"
                                    + " WHERE t.queue = '" + ChaosSchema.QUEUE + "' AND a.outcome = 'LEASE_EXPIRED'"));
            m.put(
                    "failedAttempts",
                    one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_attempt a JOIN dbtasks_task t"
                                    + " ON t.id = a.task_id WHERE t.queue = '" + ChaosSchema.QUEUE
                                    + "' AND a.outcome = 'FAILED'"));
        }
        return m;
    }

    /**
     * @param ds the chaos database
     * @return chaos tasks not yet SUCCEEDED, FAILED or CANCELLED
     * @throws SQLException if the query fails
     */
    public static long open(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            return one(
                    s,
                    "SELECT COUNT(*) FROM dbtasks_task WHERE queue = '" + ChaosSchema.QUEUE
                            + "' AND status IN ('WAITING', 'PENDING', 'RUNNING')");
        }
    }

    /**
     * @param ds the chaos database
     * @return chaos tasks SUCCEEDED so far
     * @throws SQLException if the query fails
     */
    public static long succeeded(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            return one(
                    s,
                    "SELECT COUNT(*) FROM dbtasks_task WHERE queue = '" + ChaosSchema.QUEUE
                            + "' AND status = 'SUCCEEDED'");
        }
    }

    static long one(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
