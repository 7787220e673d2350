package io.dbtasks.internal;

import io.dbtasks.IllegalTransitionException;
import io.dbtasks.Task;
import io.dbtasks.TaskNotFoundException;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.util.function.Consumer;

/**
 * Operator actions. Each is one guarded UPDATE whose WHERE clause states the allowed source states;
 * when it changes 0 rows the task is read to say whether it is missing (404) or in a state that
 * does not allow the action (409).
 */
public final class TaskOperations {
    private final Jdbc jdbc;
    private final Dialect dialect;
    private final TaskQueries queries;
    private final Consumer<String> wake;

    TaskOperations(Jdbc jdbc, Dialect dialect, TaskQueries queries, Consumer<String> wake) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.queries = queries;
        this.wake = wake;
    }

    public Task retry(long id, int additionalAttempts) {
        if (additionalAttempts < 1) {
            throw new IllegalArgumentException("additionalAttempts must be at least 1, got " + additionalAttempts);
        }
        int n = update(
                "UPDATE dbtasks_task SET status = 'PENDING', run_at = " + now() + ", updated_at = " + now()
                        + ", finished_at = NULL, cancel_requested = FALSE,"
                        + " max_attempts = GREATEST(max_attempts, attempt + ?)"
                        + " WHERE id = ? AND status IN ('FAILED', 'CANCELLED')",
                additionalAttempts,
                id);
        return after(n, id, "retry", "only FAILED or CANCELLED tasks can be retried");
    }

    public Task cancel(long id) {
        int n = update(
                "UPDATE dbtasks_task SET status = 'CANCELLED', finished_at = " + now() + ", updated_at = " + now()
                        + " WHERE id = ? AND status = 'PENDING'",
                id);
        if (n == 0) {
            // A running handler is stopped cooperatively: its worker sees the flag at the next heartbeat.
            n = update(
                    "UPDATE dbtasks_task SET cancel_requested = TRUE, updated_at = " + now()
                            + " WHERE id = ? AND status = 'RUNNING'",
                    id);
        }
        return after(n, id, "cancel", "SUCCEEDED, FAILED and CANCELLED tasks are finished");
    }

    public Task reschedule(long id, Instant runAt) {
        int n = jdbc.withConnection("Reschedule task " + id, c -> {
            try (PreparedStatement ps = c.prepareStatement("UPDATE dbtasks_task SET run_at = ?, updated_at = " + now()
                    + " WHERE id = ? AND status = 'PENDING'")) {
                dialect.setInstant(ps, 1, runAt);
                ps.setLong(2, id);
                return ps.executeUpdate();
            }
        });
        return after(n, id, "reschedule", "only PENDING tasks can be rescheduled; retry a finished one instead");
    }

    public Task runNow(String key) {
        Task task = queries.findByKey(key)
                .orElseThrow(() -> new TaskNotFoundException("No task has idempotency key '" + key + "'"));
        int n = update(
                "UPDATE dbtasks_task SET run_at = " + now() + ", updated_at = " + now()
                        + " WHERE id = ? AND status = 'PENDING'",
                task.id());
        if (n == 0) {
            n = update(
                    "UPDATE dbtasks_task SET status = 'PENDING', run_at = " + now() + ", updated_at = " + now()
                            + ", finished_at = NULL, cancel_requested = FALSE,"
                            + " max_attempts = GREATEST(max_attempts, attempt + 1)"
                            + " WHERE id = ? AND status IN ('FAILED', 'CANCELLED')",
                    task.id());
        }
        return after(n, task.id(), "run now", "a RUNNING task is already running and a SUCCEEDED one is done");
    }

    private Task after(int updated, long id, String action, String rule) {
        Task task = queries.find(id).orElseThrow(() -> new TaskNotFoundException("No task has id " + id));
        if (updated == 0) {
            throw new IllegalTransitionException(
                    "Cannot " + action + " task " + id + " while it is " + task.status() + ": " + rule, task.status());
        }
        if (updated != 1) {
            throw new IllegalStateException(action + " of task " + id + " changed " + updated + " rows");
        }
        if (task.status() == TaskStatus.PENDING) {
            wake.accept(task.queue());
        }
        return task;
    }

    private int update(String sql, Object... args) {
        return jdbc.withConnection("Update task", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                for (int i = 0; i < args.length; i++) {
                    ps.setObject(i + 1, args[i]);
                }
                return ps.executeUpdate();
            }
        });
    }

    private String now() {
        return dialect.now();
    }
}
