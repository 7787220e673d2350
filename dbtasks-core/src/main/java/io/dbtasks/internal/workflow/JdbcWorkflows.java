package io.dbtasks.internal.workflow;

import io.dbtasks.EnqueueResult;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.completion.AddedStep;
import io.dbtasks.internal.completion.TaskUpdate;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.enqueue.Enqueuer;
import io.dbtasks.internal.query.TaskOperations;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.workflow.Dependency;
import io.dbtasks.workflow.StepState;
import io.dbtasks.workflow.Workflow;
import io.dbtasks.workflow.WorkflowNotFoundException;
import io.dbtasks.workflow.WorkflowRun;
import io.dbtasks.workflow.Workflows;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The JDBC workflow store: inserts a workflow's row, steps and edges in one transaction, reads them
 * back, and cancels or retries a workflow's steps. What a step's end does to its dependents is
 * {@code Dependents}, called by the settle path.
 *
 * <p>The steps are inserted with one multi-row INSERT ({@link Enqueuer#insertSteps}), each in its
 * first state: WAITING with its count of dependencies, or PENDING if it has none. Thread-safe.
 */
public final class JdbcWorkflows implements Workflows {
    /** Edges per multi-row INSERT. */
    private static final int EDGE_PAGE = 500;

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final Enqueuer enqueuer;
    private final TaskOperations operations;
    /** A downstream step waits for more added steps. Binds: how many, task id. */
    private final TaskUpdate moreToWaitFor;
    /** Cancels a workflow's steps that have not started. Binds: workflow id. */
    private final TaskUpdate cancelUnstarted;

    /**
     * @param jdbc connections
     * @param dialect the database's dialect
     * @param enqueuer inserts the steps' tasks
     * @param operations retries a workflow's failed steps
     */
    public JdbcWorkflows(Jdbc jdbc, Dialect dialect, Enqueuer enqueuer, TaskOperations operations) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.enqueuer = enqueuer;
        this.operations = operations;
        TaskUpdate update = new TaskUpdate(dialect);
        this.moreToWaitFor = update.set("waiting_for = waiting_for + ?").and("id = ?");
        this.cancelUnstarted = update.to(TaskStatus.CANCELLED)
                .set("last_error = 'Cancelled with its workflow before it started'")
                .whereIn(TaskStatus.WAITING, TaskStatus.PENDING)
                .and("workflow_id = ?");
    }

    @Override
    public WorkflowRun insert(Workflow workflow) {
        Objects.requireNonNull(workflow, "workflow");
        return Jdbc.retryingDeadlocks(() -> jdbc.inTransaction(
                "Insert workflow '" + workflow.name() + "' of "
                        + workflow.steps().size() + " step(s)",
                c -> insertOn(c, workflow)));
    }

    @Override
    public WorkflowRun insert(Connection connection, Workflow workflow) {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(workflow, "workflow");
        try {
            return insertOn(connection, workflow);
        } catch (SQLException e) {
            throw Jdbc.failure("Insert workflow '" + workflow.name() + "'", e);
        }
    }

    private WorkflowRun insertOn(Connection c, Workflow workflow) throws SQLException {
        long id;
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO dbtasks_workflow (name, created_at) VALUES (?, " + dialect.now() + ")",
                new String[] {"id"})) {
            ps.setString(1, workflow.name());
            ps.executeUpdate();
            try (ResultSet keys = ps.getGeneratedKeys()) {
                if (!keys.next()) {
                    throw new SQLException("The database returned no id for the inserted workflow");
                }
                id = keys.getLong(1);
            }
        }
        Instant createdAt = createdAt(c, id).orElseThrow();
        List<Enqueuer.Step> rows = new ArrayList<>(workflow.steps().size());
        for (Workflow.Step s : workflow.steps()) {
            rows.add(new Enqueuer.Step(
                    s.request(), id, s.name(), s.dependencies().size()));
        }
        List<EnqueueResult> tasks = enqueuer.insertSteps(c, rows);
        Map<String, Long> ids = new HashMap<>();
        List<StepState> steps = new ArrayList<>(workflow.steps().size());
        for (int k = 0; k < tasks.size(); k++) {
            Workflow.Step s = workflow.steps().get(k);
            ids.put(s.name(), tasks.get(k).task().id());
            steps.add(new StepState(
                    s.name(), tasks.get(k).task().id(), tasks.get(k).task().status(), s.dependencies(), null, null));
        }
        List<long[]> edges = new ArrayList<>();
        List<String> policies = new ArrayList<>();
        for (Workflow.Step s : workflow.steps()) {
            for (Dependency d : s.dependencies()) {
                edges.add(new long[] {ids.get(s.name()), ids.get(d.step())});
                policies.add(d.onFailure().name());
            }
        }
        for (int from = 0; from < edges.size(); from += EDGE_PAGE) {
            int to = Math.min(edges.size(), from + EDGE_PAGE);
            try (PreparedStatement ps =
                    c.prepareStatement("INSERT INTO dbtasks_dependency (task_id, depends_on, on_failure) VALUES "
                            + String.join(", ", Collections.nCopies(to - from, "(?, ?, ?)")))) {
                int i = 1;
                for (int k = from; k < to; k++) {
                    ps.setLong(i++, edges.get(k)[0]);
                    ps.setLong(i++, edges.get(k)[1]);
                    ps.setString(i++, policies.get(k));
                }
                ps.executeUpdate();
            }
        }
        return new WorkflowRun(id, workflow.name(), createdAt, steps);
    }

    /**
     * Inserts the steps {@code adder} adds to its workflow, on the transaction that records its
     * success: claimable once it commits, and each also a dependency of its downstream steps, whose
     * counts go up before the adder's success counts them down.
     */
    public void addSteps(Connection c, io.dbtasks.Task adder, List<AddedStep> steps) throws SQLException {
        long workflowId = adder.workflowId();
        List<Enqueuer.Step> rows = new ArrayList<>(steps.size());
        Map<String, Integer> extra = new java.util.TreeMap<>();
        for (AddedStep s : steps) {
            rows.add(new Enqueuer.Step(s.request(), workflowId, s.name(), 0));
            for (String d : s.downstream()) {
                extra.merge(d, 1, Integer::sum);
            }
        }
        List<EnqueueResult> tasks = enqueuer.insertSteps(c, rows);
        if (extra.isEmpty()) {
            return;
        }
        Map<String, Long> downstream = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT id, step FROM dbtasks_task WHERE workflow_id = ? AND"
                + " step IN (" + String.join(", ", Collections.nCopies(extra.size(), "?")) + ")")) {
            int i = 1;
            ps.setLong(i++, workflowId);
            for (String d : extra.keySet()) {
                ps.setString(i++, d);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    downstream.put(rs.getString(2), rs.getLong(1));
                }
            }
        }
        List<long[]> edges = new ArrayList<>();
        for (int k = 0; k < steps.size(); k++) {
            for (String d : steps.get(k).downstream()) {
                Long id = downstream.get(d);
                if (id == null) {
                    throw new SQLException("Step '" + d + "' of workflow " + workflowId + " was deleted");
                }
                edges.add(new long[] {id, tasks.get(k).task().id()});
            }
        }
        insertEdges(c, edges, Collections.nCopies(edges.size(), Dependency.OnFailure.CANCEL.name()));
        List<Long> ids = new ArrayList<>(downstream.values());
        Collections.sort(ids); // one lock order for all writers
        for (long id : ids) {
            String step = null;
            for (Map.Entry<String, Long> e : downstream.entrySet()) {
                if (e.getValue() == id) {
                    step = e.getKey();
                }
            }
            moreToWaitFor.run(c, extra.get(step), id);
        }
    }

    private static void insertEdges(Connection c, List<long[]> edges, List<String> policies) throws SQLException {
        for (int from = 0; from < edges.size(); from += EDGE_PAGE) {
            int to = Math.min(edges.size(), from + EDGE_PAGE);
            try (PreparedStatement ps =
                    c.prepareStatement("INSERT INTO dbtasks_dependency (task_id, depends_on, on_failure) VALUES "
                            + String.join(", ", Collections.nCopies(to - from, "(?, ?, ?)")))) {
                int i = 1;
                for (int k = from; k < to; k++) {
                    ps.setLong(i++, edges.get(k)[0]);
                    ps.setLong(i++, edges.get(k)[1]);
                    ps.setString(i++, policies.get(k));
                }
                ps.executeUpdate();
            }
        }
    }

    private Optional<Instant> createdAt(Connection c, long id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT created_at FROM dbtasks_workflow WHERE id = ?")) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(dialect.getInstant(rs, "created_at")) : Optional.empty();
            }
        }
    }

    @Override
    public Optional<WorkflowRun> find(long id) {
        return jdbc.withConnection("Read workflow " + id, c -> {
            String name;
            Instant createdAt;
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT name, created_at FROM dbtasks_workflow WHERE id = ?")) {
                ps.setLong(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return Optional.empty();
                    }
                    name = rs.getString(1);
                    createdAt = dialect.getInstant(rs, "created_at");
                }
            }
            Map<Long, String> stepOf = new HashMap<>();
            Map<Long, Object[]> rows = new LinkedHashMap<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT id, step, status, result, last_error"
                    + " FROM dbtasks_task WHERE workflow_id = ? ORDER BY id")) {
                ps.setLong(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        stepOf.put(rs.getLong(1), rs.getString(2));
                        rows.put(rs.getLong(1), new Object[] {
                            rs.getString(2), TaskStatus.valueOf(rs.getString(3)), rs.getString(4), rs.getString(5)
                        });
                    }
                }
            }
            Map<Long, List<Dependency>> dependencies = new HashMap<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT d.task_id, d.depends_on, d.on_failure"
                    + " FROM dbtasks_dependency d JOIN dbtasks_task t ON t.id = d.task_id WHERE t.workflow_id = ?"
                    + " ORDER BY d.task_id, d.depends_on")) {
                ps.setLong(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String step = stepOf.get(rs.getLong(2));
                        if (step != null) {
                            dependencies
                                    .computeIfAbsent(rs.getLong(1), k -> new ArrayList<>())
                                    .add(new Dependency(step, Dependency.OnFailure.valueOf(rs.getString(3))));
                        }
                    }
                }
            }
            List<StepState> steps = new ArrayList<>(rows.size());
            rows.forEach((taskId, r) -> steps.add(new StepState(
                    (String) r[0],
                    taskId,
                    (TaskStatus) r[1],
                    dependencies.getOrDefault(taskId, List.of()),
                    (String) r[2],
                    (String) r[3])));
            return Optional.of(new WorkflowRun(id, name, createdAt, steps));
        });
    }

    @Override
    public int cancel(long id) {
        requireWorkflow(id);
        return Jdbc.retryingDeadlocks(
                () -> jdbc.withConnection("Cancel workflow " + id, c -> cancelUnstarted.run(c, id)));
    }

    @Override
    public int retry(long id) {
        requireWorkflow(id);
        List<Long> failed = jdbc.withConnection("Read the failed steps of workflow " + id, c -> {
            List<Long> ids = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT id FROM dbtasks_task WHERE workflow_id = ? AND "
                    + TaskUpdate.is("status", TaskStatus.FAILED) + " ORDER BY id")) {
                ps.setLong(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        ids.add(rs.getLong(1));
                    }
                }
            }
            return ids;
        });
        int retried = 0;
        for (long taskId : failed) {
            try {
                operations.retry(taskId, 1);
                retried++;
            } catch (io.dbtasks.IllegalTransitionException changedMeanwhile) {
                // retried by someone else meanwhile
            }
        }
        return retried;
    }

    private void requireWorkflow(long id) {
        boolean exists =
                jdbc.withConnection("Find workflow " + id, c -> createdAt(c, id).isPresent());
        if (!exists) {
            throw new WorkflowNotFoundException("No workflow has id " + id + "; it was never inserted or was deleted");
        }
    }
}
