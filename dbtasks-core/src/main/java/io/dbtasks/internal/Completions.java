package io.dbtasks.internal;

import io.dbtasks.AttemptOutcome;
import io.dbtasks.Task;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Settles an attempt: SUCCEEDED, retry (back to PENDING after a backoff), FAILED, CANCELLED, or
 * handed back on shutdown. Each is one UPDATE guarded by {@code id AND lease_token AND status =
 * 'RUNNING'} plus, in the same transaction, the attempt row. {@code false} means the guard matched
 * 0 rows: the lease was lost, nothing was written, and the caller discards the result.
 *
 * <p>A retry never undoes an operator's cancel request: an attempt that fails while {@code
 * cancel_requested} is set ends the task CANCELLED instead of sending it back to PENDING, whether or
 * not the worker had noticed the request yet.
 */
final class Completions {
    private final String guard;
    private final Jdbc jdbc;
    private final Dialect dialect;
    private final Attempts attempts;

    Completions(Jdbc jdbc, Dialect dialect, Attempts attempts) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.attempts = attempts;
        this.guard = " WHERE id = ? AND lease_token = ? AND " + dialect.isRunning("status");
    }

    /** One success through the batch path the engine uses; {@code false} if the lease was lost. */
    boolean succeed(Task t, long durationMs) {
        return succeedAll(List.of(new Success(t, durationMs))).contains(t.fencingToken());
    }

    /**
     * Records success on the caller's open transaction {@code c} (a transactional handler's), without
     * committing: the caller commits if this returns {@code true} and rolls back otherwise, so the
     * handler's effects and SUCCEEDED commit together or not at all.
     *
     * @return {@code false} if the lease was lost (0 rows)
     */
    boolean succeedOn(Connection c, Task t, long durationMs) throws SQLException {
        if (!checked(
                update(c, t, "status = 'SUCCEEDED', finished_at = " + now() + ", last_error = NULL", "", null, null),
                t)) {
            return false;
        }
        attempts.insert(c, Attempts.Row.of(t, durationMs, AttemptOutcome.SUCCEEDED, null));
        return true;
    }

    /** A successful attempt waiting to be recorded. */
    record Success(Task task, long durationMs) {}

    /**
     * Records many successes in one transaction: a locking read of the tasks still RUNNING, whose
     * tokens are compared with the attempts' (the guard, evaluated under the row locks), one UPDATE
     * of those rows, and one multi-row INSERT of their attempts. An attempt whose lease was lost is
     * left out: nothing of it is written.
     *
     * @return the lease tokens of the attempts recorded
     */
    Set<Long> succeedAll(List<Success> batch) {
        String oneStatement = dialect.completeBatchSql();
        if (oneStatement != null) {
            return succeedAllInOneStatement(oneStatement, batch);
        }
        Map<Long, Success> byId = new HashMap<>();
        for (Success s : batch) {
            byId.put(s.task().id(), s);
        }
        String in = String.join(", ", Collections.nCopies(byId.size(), "?"));
        return jdbc.inTransaction("Record " + batch.size() + " successful attempt(s)", c -> {
            List<Success> held = new ArrayList<>(byId.size());
            try (PreparedStatement ps = c.prepareStatement("SELECT id, lease_token FROM dbtasks_task WHERE id IN (" + in
                    + ") AND status = 'RUNNING'" + dialect.forUpdate())) {
                int i = 1;
                for (Long id : byId.keySet()) {
                    ps.setLong(i++, id);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        Success s = byId.get(rs.getLong(1));
                        if (s != null && s.task().fencingToken() == rs.getLong(2)) {
                            held.add(s);
                        }
                    }
                }
            }
            if (held.isEmpty()) {
                return Set.of();
            }
            try (PreparedStatement ps =
                    c.prepareStatement("UPDATE dbtasks_task SET status = 'SUCCEEDED', finished_at = "
                            + now() + ", last_error = NULL, lease_owner = NULL, lease_expires_at = NULL,"
                            + " cancel_requested = FALSE, updated_at = " + now()
                            + " WHERE status = 'RUNNING' AND id IN ("
                            + String.join(", ", Collections.nCopies(held.size(), "?")) + ")")) {
                int i = 1;
                for (Success s : held) {
                    ps.setLong(i++, s.task().id());
                }
                int n = ps.executeUpdate();
                if (n != held.size()) {
                    throw new IllegalStateException("completed " + n + " of " + held.size() + " locked tasks");
                }
            }
            List<Attempts.Row> rows = new ArrayList<>(held.size());
            Set<Long> tokens = new HashSet<>();
            for (Success s : held) {
                rows.add(Attempts.Row.of(s.task(), s.durationMs(), AttemptOutcome.SUCCEEDED, null));
                tokens.add(s.task().fencingToken());
            }
            attempts.insertAll(c, rows);
            return tokens;
        });
    }

    /** {@link #succeedAll} where the dialect completes and records a batch in one statement. */
    private Set<Long> succeedAllInOneStatement(String sql, List<Success> batch) {
        return jdbc.withConnection("Record " + batch.size() + " successful attempt(s)", c -> {
            Long[] ids = new Long[batch.size()];
            Long[] tokens = new Long[batch.size()];
            Long[] durations = new Long[batch.size()];
            String[] workers = new String[batch.size()];
            for (int i = 0; i < batch.size(); i++) {
                Task t = batch.get(i).task();
                ids[i] = t.id();
                tokens[i] = t.fencingToken();
                durations[i] = batch.get(i).durationMs();
                workers[i] = t.leaseOwner() == null ? "unknown" : t.leaseOwner();
            }
            Set<Long> recorded = new HashSet<>();
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setArray(1, c.createArrayOf("bigint", ids));
                ps.setArray(2, c.createArrayOf("bigint", tokens));
                ps.setArray(3, c.createArrayOf("bigint", durations));
                ps.setArray(4, c.createArrayOf("text", workers));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        recorded.add(rs.getLong(1));
                    }
                }
            }
            return recorded;
        });
    }

    /**
     * Back to PENDING, due {@code delay} after the database's now; CANCELLED instead if an operator
     * asked to cancel the task while this attempt ran.
     *
     * @return the status written (PENDING or CANCELLED), or empty if the lease was lost
     */
    Optional<TaskStatus> retry(Task t, AttemptOutcome outcome, Throwable error, Duration delay, long durationMs) {
        String reason = Attempts.reason(error);
        Attempts.Row row = Attempts.Row.of(t, durationMs, outcome, error);
        return jdbc.inTransaction("Record outcome of task " + t.id(), c -> {
            TaskStatus written = TaskStatus.PENDING;
            int n = update(
                    c,
                    t,
                    "status = 'PENDING', run_at = " + dialect.nowPlusMillis() + ", last_error = ?",
                    " AND cancel_requested = FALSE",
                    delay.toMillis(),
                    reason);
            if (n == 0) {
                written = TaskStatus.CANCELLED;
                n = update(
                        c,
                        t,
                        "status = 'CANCELLED', finished_at = " + now() + ", last_error = ?",
                        " AND cancel_requested = TRUE",
                        null,
                        "Cancelled by an operator; the attempt failed with " + reason);
            }
            if (!checked(n, t)) {
                return Optional.empty();
            }
            attempts.insert(c, row);
            return Optional.of(written);
        });
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

    /**
     * Back to PENDING at once, giving back the attempt; no attempt row. CANCELLED instead if an
     * operator asked to cancel the task meanwhile (the request reaches the worker only with the next
     * heartbeat, so a task handed back before that would otherwise lose it).
     *
     * @return the status written (PENDING or CANCELLED), or empty if the lease was lost
     */
    Optional<TaskStatus> handBack(Task t) {
        return jdbc.inTransaction("Hand back task " + t.id(), c -> {
            String giveBack = "attempt = attempt - 1, ";
            if (checked(
                    update(
                            c,
                            t,
                            giveBack + "status = 'PENDING', run_at = " + now(),
                            " AND cancel_requested = FALSE",
                            null,
                            null),
                    t)) {
                return Optional.of(TaskStatus.PENDING);
            }
            boolean cancelled = checked(
                    update(
                            c,
                            t,
                            giveBack + "status = 'CANCELLED', finished_at = " + now() + ", last_error = ?",
                            " AND cancel_requested = TRUE",
                            null,
                            "Cancelled by an operator; handed back before it finished"),
                    t);
            return cancelled ? Optional.of(TaskStatus.CANCELLED) : Optional.empty();
        });
    }

    private boolean settle(Task t, String set, Long delayMs, String lastError, Attempts.Row row) {
        return jdbc.inTransaction("Record outcome of task " + t.id(), c -> {
            if (!checked(update(c, t, set, "", delayMs, lastError), t)) {
                return false;
            }
            if (row != null) {
                attempts.insert(c, row);
            }
            return true;
        });
    }

    /** The guarded UPDATE of one settle; {@code extraGuard} narrows the precondition further. */
    private int update(Connection c, Task t, String set, String extraGuard, Long delayMs, String lastError)
            throws SQLException {
        // Out of RUNNING nobody holds the lease: no owner, no expiry (the token stays, as the last claim's).
        String sql = "UPDATE dbtasks_task SET " + set + ", lease_owner = NULL, lease_expires_at = NULL,"
                + " cancel_requested = FALSE, updated_at = " + now() + guard + extraGuard;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            if (delayMs != null) {
                ps.setLong(i++, delayMs);
            }
            if (lastError != null) {
                ps.setString(i++, lastError);
            }
            ps.setLong(i++, t.id());
            ps.setLong(i, t.fencingToken());
            return ps.executeUpdate();
        }
    }

    /** @return {@code true} for 1 row, {@code false} for 0 (the lease is lost); anything else is a bug */
    private static boolean checked(int n, Task t) {
        if (n != 0 && n != 1) {
            throw new IllegalStateException("outcome of task " + t.id() + " changed " + n + " rows");
        }
        return n == 1;
    }

    private String now() {
        return dialect.now();
    }
}
