package io.dbtasks.internal.query;

import io.dbtasks.RetryPolicy;
import io.dbtasks.Task;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/** Reads task rows selected with {@link Dialect#TASK_COLUMNS}. */
public final class TaskRows {
    /** A claimed task with what the worker needs beyond the public view. */
    public record Claimed(Task task, RetryPolicy retryPolicy, Duration timeout) {}

    private final Dialect dialect;

    public TaskRows(Dialect dialect) {
        this.dialect = dialect;
    }

    public Task task(ResultSet rs) throws SQLException {
        long token = rs.getLong("lease_token");
        Long fencingToken = rs.wasNull() ? null : token;
        return new Task(
                rs.getLong("id"),
                rs.getString("queue"),
                rs.getString("kind"),
                TaskStatus.valueOf(rs.getString("status")),
                rs.getInt("priority"),
                rs.getInt("attempt"),
                rs.getInt("max_attempts"),
                rs.getString("idempotency_key"),
                rs.getString("name"),
                rs.getString("reference"),
                rs.getString("payload"),
                dialect.getInstant(rs, "run_at"),
                rs.getString("lease_owner"),
                fencingToken,
                dialect.getInstant(rs, "lease_expires_at"),
                rs.getBoolean("cancel_requested"),
                dialect.getInstant(rs, "created_at"),
                dialect.getInstant(rs, "updated_at"),
                dialect.getInstant(rs, "started_at"),
                dialect.getInstant(rs, "finished_at"),
                rs.getString("last_error"),
                rs.getString("trace_parent"),
                rs.getString("concurrency_key"),
                workflowId(rs));
    }

    private static Long workflowId(ResultSet rs) throws SQLException {
        long id = rs.getLong("workflow_id");
        return rs.wasNull() ? null : id;
    }

    public Claimed claimed(ResultSet rs) throws SQLException {
        Task task = task(rs);
        RetryPolicy policy = RetryPolicy.of(
                RetryPolicy.Backoff.valueOf(rs.getString("backoff")),
                Duration.ofMillis(rs.getLong("backoff_initial_ms")),
                rs.getDouble("backoff_multiplier"),
                Duration.ofMillis(rs.getLong("backoff_max_ms")),
                rs.getDouble("backoff_jitter"));
        long timeoutMs = rs.getLong("timeout_ms");
        Duration timeout = rs.wasNull() ? null : Duration.ofMillis(timeoutMs);
        return new Claimed(task, policy, timeout);
    }
}
