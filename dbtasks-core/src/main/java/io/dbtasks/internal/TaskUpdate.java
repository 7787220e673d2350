package io.dbtasks.internal;

import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The one builder of guarded task UPDATEs, which every change of a task row after its INSERT goes
 * through (claims excepted: each dialect writes its claim as one whole statement): settling an
 * attempt ({@link Completions}), heartbeat and rescue ({@link Leases}), and operator actions
 * ({@link TaskOperations}), so the guard on each transition is written once.
 *
 * <p>An update names its target state with {@link #to(TaskStatus)}, which also writes what every
 * move into that state writes: {@code finished_at} for a final state, and, when it leaves RUNNING,
 * the released lease ({@code lease_owner}, {@code lease_expires_at} and {@code cancel_requested}
 * cleared; the token stays, as the last claim's). Its WHERE clause states the precondition: {@link
 * #held()} is the lease guard ({@code id AND lease_token AND RUNNING}), {@link #whereIn} the allowed
 * source states. {@link #run} binds and executes it and {@link #checked} reads the row count: 0 =
 * someone else won, 1 = ours, anything else = a bug that throws.
 *
 * <p>Immutable; thread-safe.
 */
final class TaskUpdate {
    /** A condition on the primary key: such an update reads and locks through the key alone. */
    private static final java.util.regex.Pattern BY_KEY = java.util.regex.Pattern.compile("(^| )id (= \\?|IN \\()");

    private final Dialect dialect;
    private final String set;
    private final String where;
    private final boolean touch;

    /** @param dialect the database's dialect, for its clock and its RUNNING test */
    TaskUpdate(Dialect dialect) {
        this(dialect, "", "", true);
    }

    private TaskUpdate(Dialect dialect, String set, String where, boolean touch) {
        this.dialect = dialect;
        this.set = set;
        this.where = where;
        this.touch = touch;
    }

    /** Leaves {@code updated_at} alone: a lease renewal is not a change of the task. */
    TaskUpdate renewal() {
        return new TaskUpdate(dialect, set, where, false);
    }

    /**
     * Moves the row to {@code status}: sets it, {@code finished_at} ({@code now} for a final state,
     * {@code NULL} otherwise) and {@code updated_at}; releases the lease unless the target is
     * RUNNING.
     */
    TaskUpdate to(TaskStatus status) {
        String now = dialect.now();
        String moved = "status = " + Dialect.status(status) + ", finished_at = " + (status.isFinal() ? now : "NULL");
        if (status != TaskStatus.RUNNING) {
            moved += ", lease_owner = NULL, lease_expires_at = NULL, cancel_requested = FALSE";
        }
        return set(moved);
    }

    /** Adds assignments (comma-separated SQL); {@code updated_at} is written unless {@link #renewal()}. */
    TaskUpdate set(String assignments) {
        return new TaskUpdate(dialect, set.isEmpty() ? assignments : set + ", " + assignments, where, touch);
    }

    /** The lease guard: the row is {@code id}'s, under {@code token}, and RUNNING. Binds: id, token. */
    TaskUpdate held() {
        return and("id = ? AND lease_token = ? AND " + dialect.isRunning("status"));
    }

    /** The row is in one of {@code statuses}. */
    TaskUpdate whereIn(TaskStatus... statuses) {
        List<String> literals = new ArrayList<>(statuses.length);
        for (TaskStatus s : statuses) {
            literals.add(Dialect.status(s));
        }
        return and(
                statuses.length == 1
                        ? "status = " + literals.get(0)
                        : "status IN (" + String.join(", ", literals) + ")");
    }

    /** Narrows the precondition with another SQL condition. */
    TaskUpdate and(String condition) {
        return new TaskUpdate(dialect, set, where.isEmpty() ? condition : where + " AND " + condition, touch);
    }

    /** @return the statement */
    String sql() {
        if (set.isEmpty() || where.isEmpty()) {
            throw new IllegalStateException("a task UPDATE needs assignments and a guard");
        }
        String table = BY_KEY.matcher(where).find() ? dialect.taskTableByKey() : "dbtasks_task";
        return "UPDATE " + table + " SET " + set + (touch ? ", updated_at = " + dialect.now() : "") + " WHERE " + where;
    }

    /**
     * Executes the statement on {@code c} with {@code args} bound in order ({@link Instant}s as
     * timestamps, {@code null} as a NULL string).
     *
     * @return the number of rows changed
     */
    int run(Connection c, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql())) {
            bind(ps, args);
            return ps.executeUpdate();
        }
    }

    /**
     * Executes the statement once per element of {@code argsList} as one JDBC batch, which drivers
     * send in one round trip (pgjdbc pipelines it); only where {@link Dialect#exactBatchCounts()}.
     *
     * @return the number of rows each execution changed, in order
     */
    int[] runBatch(Connection c, List<Object[]> argsList) throws SQLException {
        if (argsList.isEmpty()) {
            return new int[0];
        }
        try (PreparedStatement ps = c.prepareStatement(sql())) {
            for (Object[] args : argsList) {
                bind(ps, args);
                ps.addBatch();
            }
            int[] counts = ps.executeBatch();
            if (counts.length != argsList.size()) {
                throw new IllegalStateException(
                        "a batch of " + argsList.size() + " task UPDATEs reported " + counts.length + " row counts");
            }
            return counts;
        }
    }

    void bind(PreparedStatement ps, Object... args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            Object a = args[i];
            if (a instanceof Instant t) {
                dialect.setInstant(ps, i + 1, t);
            } else if (a == null) {
                ps.setNull(i + 1, java.sql.Types.VARCHAR);
            } else {
                ps.setObject(i + 1, a);
            }
        }
    }

    /**
     * The one row-count check of a guarded UPDATE that finds its row by key.
     *
     * @return {@code true} for 1 row, {@code false} for 0 (the guard did not hold)
     * @throws IllegalStateException for more: the guard was not a key, a bug
     */
    static boolean checked(int rows, String what) {
        if (rows != 0 && rows != 1) {
            throw new IllegalStateException(what + " changed " + rows + " rows");
        }
        return rows == 1;
    }

    /** @return the condition that a column is {@code status}, for reads that go with a transition */
    /**
     * The settling's locking read: the RUNNING rows among {@code ids} task ids, locked by primary
     * key ({@link Dialect#taskTableByKey()}). Binds: the ids.
     *
     * @param dialect the database's dialect
     * @param columns the columns to read
     * @param ids how many ids are bound
     * @return the statement
     */
    static String lockRunning(Dialect dialect, String columns, int ids) {
        return "SELECT " + columns + " FROM " + dialect.taskTableByKey() + " WHERE id IN ("
                + String.join(", ", java.util.Collections.nCopies(ids, "?")) + ") AND "
                + is("status", TaskStatus.RUNNING)
                + dialect.forUpdate();
    }

    /**
     * The rescue's locking read: of {@code ids} candidates (found by a read that locks nothing),
     * the rows still RUNNING with an expired lease, locked by primary key in key order, skipping
     * rows another transaction holds. Binds: the ids.
     *
     * @param dialect the database's dialect
     * @param columns the columns to read
     * @param ids how many ids are bound
     * @return the statement
     */
    static String lockExpired(Dialect dialect, String columns, int ids) {
        return "SELECT " + columns + " FROM " + dialect.taskTableByKey() + " WHERE id IN ("
                + String.join(", ", java.util.Collections.nCopies(ids, "?")) + ") AND "
                + is("status", TaskStatus.RUNNING)
                + " AND lease_expires_at < " + dialect.now() + " ORDER BY id" + dialect.forUpdateSkipLocked();
    }

    static String is(String column, TaskStatus status) {
        return column + " = " + Dialect.status(status);
    }
}
