package io.dbtasks.chaos;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Checks the workflow workload ({@link WorkflowEnqueuer}) after its steps drained. Every figure
 * must be 0 except the informational ones:
 *
 * <ul>
 *   <li>{@code missingWorkflows}: acknowledged names with no workflow; {@code duplicateWorkflows}:
 *       names inserted more than once; {@code stepsShort}: workflows with fewer steps than inserted;
 *   <li>{@code stepsNotSucceeded}: steps not SUCCEEDED (every step of these graphs must succeed);
 *   <li>{@code startedWithoutSucceededDependency}: edges whose dependent has an attempt while the
 *       dependency has no SUCCEEDED one;
 *   <li>{@code startedEarly}: dependency edges where an attempt of the dependent started before
 *       the dependency's SUCCEEDED attempt finished, both times by the database clock (an attempt
 *       cut short by a kill or a pause counts as well: its start is on its LEASE_EXPIRED row);
 *   <li>{@code txDuplicates}, {@code txMissing}, {@code txOrphans}, {@code txTokenMismatch}: steps
 *       with more than one effect row, SUCCEEDED steps with none, effects of steps not SUCCEEDED,
 *       effects under a token not the SUCCEEDED attempt's;
 *   <li>{@code badSucceededAttempts}: SUCCEEDED steps without exactly one SUCCEEDED attempt;
 *   <li>{@code repeatedTokens}: attempts of steps sharing a lease token;
 *   <li>informational: {@code workflows}, {@code steps}, {@code edges}, {@code rescues} (attempts
 *       ended LEASE_EXPIRED), {@code failedAttempts}.
 * </ul>
 */
public final class WorkflowChecker {
    private static final String STEPS = "t.queue = '" + ChaosSchema.QUEUE + "' AND t.kind = '" + ChaosSchema.STEP_KIND
            + "' AND t.workflow_id IS NOT NULL";

    private WorkflowChecker() {}

    /**
     * @param ds the chaos database
     * @param acknowledged the acknowledged workflow names
     * @param steps steps per workflow
     * @return the figures, in a fixed order
     * @throws SQLException if a query fails
     */
    public static Map<String, Long> check(DataSource ds, Set<String> acknowledged, int steps) throws SQLException {
        Map<String, Long> m = new LinkedHashMap<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            Set<String> present = new java.util.HashSet<>();
            long duplicates = 0;
            try (var rs = s.executeQuery("SELECT name, COUNT(*) FROM dbtasks_workflow WHERE name LIKE '"
                    + WorkflowEnqueuer.PREFIX + "%' GROUP BY name")) {
                while (rs.next()) {
                    present.add(rs.getString(1));
                    duplicates += rs.getLong(2) - 1;
                }
            }
            m.put("acknowledged", (long) acknowledged.size());
            m.put("workflows", (long) present.size());
            m.put(
                    "missingWorkflows",
                    acknowledged.stream().filter(n -> !present.contains(n)).count());
            m.put("duplicateWorkflows", duplicates);
            m.put(
                    "stepsShort",
                    Checker.one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_workflow w WHERE w.name LIKE '" + WorkflowEnqueuer.PREFIX
                                    + "%' AND (SELECT COUNT(*) FROM dbtasks_task t WHERE t.workflow_id = w.id) <> "
                                    + steps));
            m.put("steps", Checker.one(s, "SELECT COUNT(*) FROM dbtasks_task t WHERE " + STEPS));
            m.put(
                    "edges",
                    Checker.one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_dependency d JOIN dbtasks_task t ON t.id = d.task_id"
                                    + " WHERE " + STEPS));
            m.put(
                    "stepsNotSucceeded",
                    Checker.one(
                            s, "SELECT COUNT(*) FROM dbtasks_task t WHERE " + STEPS + " AND t.status <> 'SUCCEEDED'"));
            m.put(
                    "startedEarly",
                    Checker.one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_dependency d"
                                    + " JOIN dbtasks_task t ON t.id = d.task_id"
                                    + " JOIN dbtasks_attempt b ON b.task_id = d.depends_on AND b.outcome = 'SUCCEEDED'"
                                    + " WHERE " + STEPS + " AND EXISTS (SELECT 1 FROM dbtasks_attempt a"
                                    + " WHERE a.task_id = d.task_id AND a.started_at < b.finished_at)"));
            m.put(
                    "startedWithoutSucceededDependency",
                    Checker.one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_dependency d JOIN dbtasks_task t ON t.id = d.task_id"
                                    + " WHERE " + STEPS + " AND EXISTS (SELECT 1 FROM dbtasks_attempt a"
                                    + " WHERE a.task_id = d.task_id) AND NOT EXISTS (SELECT 1 FROM"
                                    + " dbtasks_attempt b WHERE b.task_id = d.depends_on AND b.outcome = 'SUCCEEDED')"));
            m.put(
                    "txDuplicates",
                    Checker.one(
                            s,
                            "SELECT COUNT(*) FROM (SELECT e.task_id FROM chaos_effect e JOIN dbtasks_task t"
                                    + " ON t.id = e.task_id WHERE " + STEPS + " GROUP BY e.task_id"
                                    + " HAVING COUNT(*) > 1) d"));
            m.put(
                    "txMissing",
                    Checker.one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_task t WHERE " + STEPS + " AND t.status = 'SUCCEEDED'"
                                    + " AND NOT EXISTS (SELECT 1 FROM chaos_effect e WHERE e.task_id = t.id)"));
            m.put(
                    "txOrphans",
                    Checker.one(
                            s,
                            "SELECT COUNT(*) FROM chaos_effect e JOIN dbtasks_task t ON t.id = e.task_id" + " WHERE "
                                    + STEPS + " AND t.status <> 'SUCCEEDED'"));
            m.put(
                    "txTokenMismatch",
                    Checker.one(
                            s,
                            "SELECT COUNT(*) FROM chaos_effect e JOIN dbtasks_task t ON t.id = e.task_id WHERE "
                                    + STEPS + " AND NOT EXISTS (SELECT 1 FROM dbtasks_attempt a"
                                    + " WHERE a.task_id = e.task_id AND a.outcome = 'SUCCEEDED'"
                                    + " AND a.lease_token = e.token)"));
            m.put(
                    "badSucceededAttempts",
                    Checker.one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_task t WHERE " + STEPS + " AND t.status = 'SUCCEEDED'"
                                    + " AND (SELECT COUNT(*) FROM dbtasks_attempt a WHERE a.task_id = t.id"
                                    + " AND a.outcome = 'SUCCEEDED') <> 1"));
            m.put(
                    "repeatedTokens",
                    Checker.one(
                            s,
                            "SELECT COALESCE(SUM(n - 1), 0) FROM (SELECT COUNT(*) n FROM dbtasks_attempt a"
                                    + " JOIN dbtasks_task t ON t.id = a.task_id WHERE " + STEPS
                                    + " GROUP BY a.lease_token HAVING COUNT(*) > 1) d"));
            m.put(
                    "rescues",
                    Checker.one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_attempt a JOIN dbtasks_task t ON t.id = a.task_id" + " WHERE "
                                    + STEPS + " AND a.outcome = 'LEASE_EXPIRED'"));
            m.put(
                    "failedAttempts",
                    Checker.one(
                            s,
                            "SELECT COUNT(*) FROM dbtasks_attempt a JOIN dbtasks_task t ON t.id = a.task_id" + " WHERE "
                                    + STEPS + " AND a.outcome = 'FAILED'"));
        }
        return m;
    }
}
