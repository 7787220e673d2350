package io.dbtasks.internal.query;

import io.dbtasks.IllegalTransitionException;
import io.dbtasks.Task;
import io.dbtasks.TaskNotFoundException;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.completion.Dependents;
import io.dbtasks.internal.completion.HistoryCounts;
import io.dbtasks.internal.completion.TaskUpdate;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Operator actions. Each is one guarded {@link TaskUpdate} whose WHERE clause states the allowed
 * source states;
 * when it changes 0 rows the task is read to say whether it is missing (404) or in a state that
 * does not allow the action (409). An action that takes a task out of a finished state (retry, run
 * now of a finished task, delete) subtracts it from its hour's count in the same transaction when
 * that hour is counted ({@link HistoryCounts#subtract}).
 */
public final class TaskOperations {
    private final Jdbc jdbc;
    private final TaskQueries queries;
    private final Consumer<String> wake;
    private final Dependents dependents;
    /** Binds: additional attempts, id. */
    private final TaskUpdate retryFinished;
    /** Binds: id. */
    private final TaskUpdate cancelPending;
    /** Binds: id. */
    private final TaskUpdate requestCancel;
    /** Binds: run at, id. */
    private final TaskUpdate reschedulePending;
    /** Binds: id. */
    private final TaskUpdate runNow;

    /** Binds: id. A retried workflow step that still lacks dependencies waits for them again. */
    private final TaskUpdate rewait;

    private final Dialect dialect;
    private final HistoryCounts history;

    public TaskOperations(Jdbc jdbc, Dialect dialect, TaskQueries queries, Consumer<String> wake) {
        this(jdbc, dialect, queries, wake, new Dependents(dialect, wake));
    }

    /**
     * @param jdbc connections
     * @param dialect the database's dialect
     * @param queries reads the task after an action
     * @param wake wakes a local worker of a queue
     * @param dependents what a workflow step's cancel or retry does to its dependents
     */
    public TaskOperations(
            Jdbc jdbc, Dialect dialect, TaskQueries queries, Consumer<String> wake, Dependents dependents) {
        this.jdbc = jdbc;
        this.dependents = dependents;
        this.queries = queries;
        this.wake = wake;
        TaskUpdate update = new TaskUpdate(dialect);
        String now = dialect.now();
        this.retryFinished = update.to(TaskStatus.PENDING)
                .set("run_at = " + now + ", max_attempts = GREATEST(max_attempts, attempt + ?)")
                .whereIn(TaskStatus.FAILED, TaskStatus.CANCELLED)
                .and("id = ?");
        // A waiting workflow step is cancelled as a pending task is; blocked_by stays NULL, so a retry
        // of one of its dependencies does not revive it.
        this.cancelPending = update.to(TaskStatus.CANCELLED)
                .whereIn(TaskStatus.PENDING, TaskStatus.WAITING)
                .and("id = ?");
        // A running handler is stopped cooperatively: its worker sees the flag at the next heartbeat.
        this.requestCancel = update.set("cancel_requested = TRUE")
                .whereIn(TaskStatus.RUNNING)
                .and("id = ?");
        this.rewait = update.to(TaskStatus.WAITING).whereIn(TaskStatus.PENDING).and("id = ? AND waiting_for > 0");
        this.reschedulePending =
                update.set("run_at = ?").whereIn(TaskStatus.PENDING).and("id = ?");
        // PENDING: due now. FAILED or CANCELLED tasks go through retryFinished, as a retry of one
        // more attempt, so that a workflow step keeps its dependencies and revives its dependents.
        this.runNow = update.set("run_at = " + now).whereIn(TaskStatus.PENDING).and("id = ?");
        this.dialect = dialect;
        this.history = new HistoryCounts(dialect);
    }

    public Task retry(long id, int additionalAttempts) {
        if (additionalAttempts < 1) {
            throw new IllegalArgumentException("additionalAttempts must be at least 1, got " + additionalAttempts);
        }
        java.util.Set<String> released = java.util.concurrent.ConcurrentHashMap.newKeySet();
        int n = Jdbc.retryingDeadlocks(() -> jdbc.inTransaction("Retry task " + id, c -> {
            return retryIn(c, id, additionalAttempts, released);
        }));
        dependents.wake(released);
        return after(n, id, "retry", "only FAILED or CANCELLED tasks can be retried");
    }

    /**
     * Sends a FAILED or CANCELLED task back to PENDING in {@code c}'s transaction: a workflow step
     * that still lacks dependencies waits for them again, and the steps its end cancelled or counted
     * wait for it again.
     *
     * @return 1 if the task was FAILED or CANCELLED, else 0
     */
    private int retryIn(java.sql.Connection c, long id, int additionalAttempts, java.util.Set<String> released)
            throws java.sql.SQLException {
        Map<HistoryCounts.Key, Long> removed = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT queue, status, finished_at FROM "
                + dialect.taskTableByKey() + " WHERE id = ?" + dialect.forUpdate())) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    HistoryCounts.add(
                            removed,
                            rs.getString(1),
                            TaskStatus.valueOf(rs.getString(2)),
                            dialect.getInstant(rs, "finished_at"));
                }
            }
        }
        int updated = retryFinished.run(c, additionalAttempts, id);
        if (updated == 1) {
            history.subtract(c, removed);
            rewait.run(c, id);
            dependents.retried(c, id, released);
        }
        return updated;
    }

    public Task cancel(long id) {
        java.util.Set<String> released = java.util.concurrent.ConcurrentHashMap.newKeySet();
        int n = Jdbc.retryingDeadlocks(() -> jdbc.inTransaction("Cancel task " + id, c -> {
            int updated = cancelPending.run(c, id);
            if (updated == 1) {
                dependents.ended(c, java.util.Map.of(id, TaskStatus.CANCELLED), released);
            }
            return updated;
        }));
        dependents.wake(released);
        if (n == 0) {
            n = update(requestCancel, id);
        }
        return after(n, id, "cancel", "SUCCEEDED, FAILED and CANCELLED tasks are finished");
    }

    public Task reschedule(long id, Instant runAt) {
        int n = update(reschedulePending, runAt, id);
        return after(n, id, "reschedule", "only PENDING tasks can be rescheduled; retry a finished one instead");
    }

    /**
     * Deletes a task that is not RUNNING, with its attempts, in one transaction.
     *
     * @return the task as it was before deletion
     */
    public Task delete(long id) {
        Task task = queries.find(id).orElseThrow(() -> new TaskNotFoundException("No task has id " + id));
        List<String> waiting = new ArrayList<>();
        // A deadlock victim's transaction was rolled back whole, so it may run again.
        int n = Jdbc.retryingDeadlocks(() -> jdbc.inTransaction("Delete task " + id, c -> {
            waiting.clear();
            String status = null;
            Map<HistoryCounts.Key, Long> removed = new HashMap<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT status, queue, finished_at FROM "
                    + dialect.taskTableByKey() + " WHERE id = ?" + dialect.forUpdate())) {
                ps.setLong(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        status = rs.getString(1);
                        HistoryCounts.add(
                                removed,
                                rs.getString(2),
                                TaskStatus.valueOf(status),
                                dialect.getInstant(rs, "finished_at"));
                    }
                }
            }
            if (status == null || TaskStatus.RUNNING.name().equals(status)) {
                return 0;
            }
            if (!TaskStatus.valueOf(status).isFinal()) {
                // Steps waiting for an unfinished step would wait for ever once it is gone.
                try (PreparedStatement ps = c.prepareStatement("SELECT t.id, t.step FROM dbtasks_dependency d"
                        + " JOIN dbtasks_task t ON t.id = d.task_id WHERE d.depends_on = ? AND "
                        + TaskUpdate.is("t.status", TaskStatus.WAITING) + " ORDER BY t.id")) {
                    ps.setLong(1, id);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            String step = rs.getString(2);
                            waiting.add(step == null ? "task " + rs.getLong(1) : "'" + step + "'");
                        }
                    }
                }
                if (!waiting.isEmpty()) {
                    return 0;
                }
            }
            int deleted;
            TaskKeys.deleteOf(c, List.of(id));
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_task WHERE id = ?")) {
                ps.setLong(1, id);
                deleted = ps.executeUpdate();
            }
            history.subtract(c, removed);
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_attempt WHERE task_id = ?")) {
                ps.setLong(1, id);
                ps.executeUpdate();
            }
            try (PreparedStatement ps =
                    c.prepareStatement("DELETE FROM dbtasks_dependency WHERE task_id = ? OR depends_on = ?")) {
                ps.setLong(1, id);
                ps.setLong(2, id);
                ps.executeUpdate();
            }
            return deleted;
        }));
        if (!waiting.isEmpty()) {
            throw new IllegalTransitionException(
                    "Cannot delete task " + id + " while it is " + task.status() + ": workflow steps "
                            + String.join(", ", waiting.subList(0, Math.min(10, waiting.size())))
                            + (waiting.size() > 10 ? " and " + (waiting.size() - 10) + " more" : "")
                            + " wait for it; cancel it (which ends them too) and delete it then",
                    task.status());
        }
        if (n == 0) {
            Task now = queries.find(id).orElseThrow(() -> new TaskNotFoundException("No task has id " + id));
            throw new IllegalTransitionException(
                    "Cannot delete task " + id + " while it is " + now.status()
                            + ": a RUNNING task holds a lease; cancel it and delete it when it has stopped",
                    now.status());
        }
        return task;
    }

    public Task runNow(String key) {
        Task task = queries.findByKey(key)
                .orElseThrow(() -> new TaskNotFoundException("No task has idempotency key '" + key + "'"));
        return runNow(task.id());
    }

    /**
     * Makes a task due now: a PENDING task gets {@code run_at} now in one guarded UPDATE; a FAILED or
     * CANCELLED one is retried with one more attempt allowed, in the transaction {@link #retry} uses,
     * so a workflow step cancelled by a failed dependency waits for it again (WAITING) instead of
     * running, and the steps a failed step cancelled wait for it again. A WAITING step is refused: it
     * runs when its dependencies have ended. RUNNING and SUCCEEDED tasks are left as they are.
     *
     * @param id the task
     * @return the task as read after the change
     * @throws TaskNotFoundException if there is no such task
     * @throws IllegalTransitionException if it is WAITING, RUNNING or SUCCEEDED
     */
    public Task runNow(long id) {
        java.util.Set<String> released = java.util.concurrent.ConcurrentHashMap.newKeySet();
        int n = Jdbc.retryingDeadlocks(() -> jdbc.inTransaction("Run task " + id + " now", c -> {
            // The retry first: a concurrent call that made the task PENDING meanwhile then finds it
            // PENDING in the second UPDATE (the other order would find it in neither).
            int updated = retryIn(c, id, 1, released);
            return updated == 1 ? updated : runNow.run(c, id);
        }));
        dependents.wake(released);
        if (n == 0) {
            Task task = queries.find(id).orElseThrow(() -> new TaskNotFoundException("No task has id " + id));
            if (task.status() == TaskStatus.WAITING) {
                throw new IllegalTransitionException(
                        "Cannot run now task " + id + " while it is WAITING: a workflow step runs once its"
                                + " dependencies have ended; retry (or run now) a failed dependency, or cancel"
                                + " the step",
                        task.status());
            }
        }
        return after(n, id, "run now", "a RUNNING task is already running and a SUCCEEDED one is done");
    }

    private Task after(int updated, long id, String action, String rule) {
        Task task = queries.find(id).orElseThrow(() -> new TaskNotFoundException("No task has id " + id));
        if (updated == 0) {
            throw new IllegalTransitionException(
                    "Cannot " + action + " task " + id + " while it is " + task.status() + ": " + rule, task.status());
        }
        TaskUpdate.checked(updated, action + " of task " + id);
        if (task.status() == TaskStatus.PENDING) {
            wake.accept(task.queue());
        }
        return task;
    }

    private int update(TaskUpdate update, Object... args) {
        // One guarded UPDATE: a deadlock victim's was rolled back whole, so it may run again.
        return Jdbc.retryingDeadlocks(() -> jdbc.withConnection("Update task", c -> update.run(c, args)));
    }
}
