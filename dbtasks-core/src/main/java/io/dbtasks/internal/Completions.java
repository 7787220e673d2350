package io.dbtasks.internal;

import io.dbtasks.AttemptOutcome;
import io.dbtasks.Task;
import io.dbtasks.internal.dialect.Dialect;
import java.sql.PreparedStatement;
import java.time.Duration;

/**
 * Settles an attempt: SUCCEEDED, retry (back to PENDING after a backoff), FAILED, CANCELLED, or
 * handed back on shutdown. Each is one UPDATE guarded by {@code id AND lease_token AND status =
 * 'RUNNING'} plus, in the same transaction, the attempt row. {@code false} means the guard matched
 * 0 rows: the lease was lost, nothing was written, and the caller discards the result.
 */
final class Completions {
    private static final String GUARD = " WHERE id = ? AND lease_token = ? AND status = 'RUNNING'";

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final Attempts attempts;

    Completions(Jdbc jdbc, Dialect dialect, Attempts attempts) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.attempts = attempts;
    }

    boolean succeed(Task t, long durationMs) {
        return settle(
                t,
                "status = 'SUCCEEDED', finished_at = " + now() + ", last_error = NULL",
                null,
                null,
                Attempts.Row.of(t, durationMs, AttemptOutcome.SUCCEEDED, null));
    }

    /** Back to PENDING, due {@code delay} after the database's now. */
    boolean retry(Task t, AttemptOutcome outcome, Throwable error, Duration delay, long durationMs) {
        return settle(
                t,
                "status = 'PENDING', run_at = " + dialect.nowPlusMillis() + ", last_error = ?",
                delay.toMillis(),
                Attempts.reason(error),
                Attempts.Row.of(t, durationMs, outcome, error));
    }

    boolean fail(Task t, AttemptOutcome outcome, Throwable error, long durationMs) {
        return settle(
                t,
                "status = 'FAILED', finished_at = " + now() + ", last_error = ?",
                null,
                Attempts.reason(error),
                Attempts.Row.of(t, durationMs, outcome, error));
    }

    boolean cancelled(Task t, Throwable error, long durationMs) {
        return settle(
                t,
                "status = 'CANCELLED', finished_at = " + now() + ", last_error = ?",
                null,
                "Cancelled by an operator while running",
                Attempts.Row.of(t, durationMs, AttemptOutcome.CANCELLED, error));
    }

    /** Back to PENDING at once, giving back the attempt; no attempt row. */
    boolean handBack(Task t) {
        return settle(t, "status = 'PENDING', attempt = attempt - 1, run_at = " + now(), null, null, null);
    }

    private boolean settle(Task t, String set, Long delayMs, String lastError, Attempts.Row row) {
        String sql = "UPDATE dbtasks_task SET " + set + ", lease_expires_at = NULL, cancel_requested = FALSE,"
                + " updated_at = " + now() + GUARD;
        return jdbc.inTransaction("Record outcome of task " + t.id(), c -> {
            int n;
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                int i = 1;
                if (delayMs != null) {
                    ps.setLong(i++, delayMs);
                }
                if (lastError != null) {
                    ps.setString(i++, lastError);
                }
                ps.setLong(i++, t.id());
                ps.setLong(i, t.leaseToken());
                n = ps.executeUpdate();
            }
            if (n == 0) {
                return false;
            }
            if (n != 1) {
                throw new IllegalStateException("outcome of task " + t.id() + " changed " + n + " rows");
            }
            if (row != null) {
                attempts.insert(c, row);
            }
            return true;
        });
    }

    private String now() {
        return dialect.now();
    }
}
