package io.dbtasks.internal.completion;

import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.dialect.RowMove;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The one builder of guarded task UPDATEs, which every change of a task row after its INSERT goes
 * through (claims excepted: each dialect writes its claim as one whole statement): settling an
 * attempt ({@link Completions}), heartbeat and rescue ({@link io.dbtasks.internal.lease.Leases}), and operator actions
 * ({@link io.dbtasks.internal.query.TaskOperations}), so the guard on each transition is written once.
 *
 * <p>An update names its target state with {@link #to(TaskStatus)}, which also writes what every
 * move into that state writes: {@code finished_at} for a final state, and, when it leaves RUNNING,
 * the released lease ({@code lease_owner}, {@code lease_expires_at} and {@code cancel_requested}
 * cleared; the token stays, as the last claim's). Its WHERE clause states the precondition: {@link
 * #held()} is the lease guard ({@code id AND lease_token AND RUNNING}), {@link #whereIn} the allowed
 * source states. {@link #run} binds and executes it and {@link #checked} reads the row count: 0 =
 * someone else won, 1 = ours, anything else = a bug that throws.
 *
 * <p>The ways an attempt leaves RUNNING are one table, {@link Exit}: what each writes besides what
 * {@link #to} writes. Every writer that settles an attempt renders its SET list from it ({@link
 * #leaving}), the engine's guarded statements and a dialect's one-statement form alike, so no
 * hand-written SQL restates a column rule.
 *
 * <p>Immutable; thread-safe.
 */
public final class TaskUpdate {
    /** A condition on the primary key: such an update reads and locks through the key alone. */
    private static final java.util.regex.Pattern BY_KEY = java.util.regex.Pattern.compile("(^| )id (= \\?|IN \\()");

    private final Dialect dialect;
    private final String set;
    private final String where;
    private final boolean touch;
    /** Whether the update moves the row into a day of history ({@link #to} a final state). */
    private final boolean moves;
    /** Whether the guard is the lease's ({@link #held()}): the row is RUNNING under a claim. */
    private final boolean held;

    /** @param dialect the database's dialect, for its clock and its RUNNING test */
    public TaskUpdate(Dialect dialect) {
        this(dialect, "", "", true, false, false);
    }

    private TaskUpdate(Dialect dialect, String set, String where, boolean touch, boolean moves, boolean held) {
        this.dialect = dialect;
        this.moves = moves;
        this.held = held;
        this.set = set;
        this.where = where;
        this.touch = touch;
    }

    /** What an {@link Exit} writes into one of its columns. */
    enum Value {
        /** SQL {@code NULL}. */
        NULL,
        /** The database's now. */
        NOW,
        /** The database's now plus the row's own backoff, in milliseconds: a per-row value. */
        AFTER_BACKOFF,
        /** The row's own error text: a per-row value. */
        ERROR,
        /** The attempt given back: {@code attempt - 1}. */
        ATTEMPT_GIVEN_BACK;

        /** @return whether each row brings its own value */
        boolean perRow() {
            return this == AFTER_BACKOFF || this == ERROR;
        }
    }

    /** One column an {@link Exit} writes, and what. */
    record Column(String name, Value value) {}

    /**
     * The ways an attempt leaves RUNNING, each with its target state, the columns it writes besides
     * those {@link #to} writes for that state, whether it applies only while no cancel is requested
     * (and which exit applies instead when one is), and whether it leaves an attempt row.
     */
    enum Exit {
        /** The handler returned: SUCCEEDED, the last error cleared. */
        SUCCEEDED(TaskStatus.SUCCEEDED, null, null, true, new Column("last_error", Value.NULL)),
        /** The attempt failed while a cancel was requested: CANCELLED rather than retried. */
        RETRY_CANCELLED(TaskStatus.CANCELLED, Boolean.TRUE, null, true, new Column("last_error", Value.ERROR)),
        /** The attempt failed with attempts left: PENDING again after its backoff. */
        RETRY(
                TaskStatus.PENDING,
                Boolean.FALSE,
                RETRY_CANCELLED,
                true,
                new Column("run_at", Value.AFTER_BACKOFF),
                new Column("last_error", Value.ERROR)),
        /** The attempt failed for good: FAILED. */
        FAILED(TaskStatus.FAILED, null, null, true, new Column("last_error", Value.ERROR)),
        /** The handler stopped on an operator's cancel: CANCELLED. */
        CANCELLED(TaskStatus.CANCELLED, null, null, true, new Column("last_error", Value.ERROR)),
        /** Handed back on shutdown while a cancel was requested: CANCELLED, the attempt given back. */
        HAND_BACK_CANCELLED(
                TaskStatus.CANCELLED,
                Boolean.TRUE,
                null,
                false,
                new Column("attempt", Value.ATTEMPT_GIVEN_BACK),
                new Column("last_error", Value.ERROR)),
        /** Handed back on shutdown: PENDING and due now, the attempt given back, no attempt row. */
        HAND_BACK(
                TaskStatus.PENDING,
                Boolean.FALSE,
                HAND_BACK_CANCELLED,
                false,
                new Column("attempt", Value.ATTEMPT_GIVEN_BACK),
                new Column("run_at", Value.NOW));

        private final TaskStatus status;
        private final Boolean cancelRequested;
        private final Exit cancelledInstead;
        private final boolean history;
        private final List<Column> columns;

        Exit(TaskStatus status, Boolean cancelRequested, Exit cancelledInstead, boolean history, Column... columns) {
            this.status = status;
            this.cancelRequested = cancelRequested;
            this.cancelledInstead = cancelledInstead;
            this.history = history;
            this.columns = List.of(columns);
        }

        /** @return the state the task moves to */
        TaskStatus status() {
            return status;
        }

        /**
         * @return the exit that applies instead while a cancel is requested, or {@code null} if this
         *     one applies either way
         */
        Exit cancelledInstead() {
            return cancelledInstead;
        }

        /** @return whether the exit leaves an attempt row */
        boolean history() {
            return history;
        }

        /** @return the per-row values its SET list binds, in the order they appear */
        List<Value> perRow() {
            return columns.stream().map(Column::value).filter(Value::perRow).toList();
        }

        /** @return its condition on {@code cancel_requested}, or {@code null} for none */
        String cancelGuard() {
            return cancelRequested == null ? null : "cancel_requested = " + (cancelRequested ? "TRUE" : "FALSE");
        }
    }

    /**
     * Leaves RUNNING by {@code exit}: {@link #to} its state plus the exit's columns, and its guard on
     * {@code cancel_requested} if it has one. The per-row values are the SQL expressions given.
     *
     * @param exit the way out
     * @param backoffMillis the SQL expression of the row's backoff in milliseconds
     * @param error the SQL expression of the row's error text
     * @return the update, its WHERE clause still to be narrowed to the rows
     */
    TaskUpdate leaving(Exit exit, String backoffMillis, String error) {
        List<String> assignments = new ArrayList<>(exit.columns.size());
        for (Column column : exit.columns) {
            String value = switch (column.value()) {
                case NULL -> "NULL";
                case NOW -> dialect.now();
                case AFTER_BACKOFF -> dialect.nowPlusMillis().replace("?", backoffMillis);
                case ERROR -> error;
                case ATTEMPT_GIVEN_BACK -> "attempt - 1";
            };
            assignments.add(column.name() + " = " + value);
        }
        TaskUpdate moved = to(exit.status).set(String.join(", ", assignments));
        return exit.cancelGuard() == null ? moved : moved.and(exit.cancelGuard());
    }

    /** @return the SET list, {@code updated_at} included unless {@link #renewal()} */
    String assignments() {
        return set + (touch ? ", updated_at = " + dialect.now() : "");
    }

    /** Leaves {@code updated_at} alone: a lease renewal is not a change of the task. */
    public TaskUpdate renewal() {
        return new TaskUpdate(dialect, set, where, false, moves, held);
    }

    /**
     * Moves the row to {@code status}: sets it, {@code finished_at} ({@code now} for a final state,
     * {@code NULL} otherwise), {@code history_day} (the day of {@code finished_at}, or 0 for live:
     * on a partitioned task table the row moves to that day's partition or back to the live one)
     * and {@code updated_at}; releases the lease unless the target is RUNNING.
     */
    public TaskUpdate to(TaskStatus status) {
        // finished_at and history_day from one value, the statement's time: the row's day partition
        // is the day of its finished_at, also across midnight.
        String now = dialect.statementTime();
        String moved = "status = " + Dialect.status(status) + ", finished_at = " + (status.isFinal() ? now : "NULL")
                + ", history_day = " + (status.isFinal() ? dialect.historyDay(now) : "0");
        if (status != TaskStatus.RUNNING) {
            moved += ", lease_owner = NULL, lease_expires_at = NULL, cancel_requested = FALSE";
        }
        TaskUpdate next = set(moved);
        return new TaskUpdate(dialect, next.set, next.where, next.touch, status.isFinal(), next.held);
    }

    /** Adds assignments (comma-separated SQL); {@code updated_at} is written unless {@link #renewal()}. */
    public TaskUpdate set(String assignments) {
        return new TaskUpdate(
                dialect, set.isEmpty() ? assignments : set + ", " + assignments, where, touch, moves, held);
    }

    /** The lease guard: the row is {@code id}'s, under {@code token}, and RUNNING. Binds: id, token. */
    public TaskUpdate held() {
        TaskUpdate guarded =
                and("id = ? AND lease_token = ? AND " + Dialect.LIVE + " AND " + dialect.isRunning("status"));
        return new TaskUpdate(dialect, guarded.set, guarded.where, guarded.touch, guarded.moves, true);
    }

    /** The row is in one of {@code statuses}; only live states also name the live partition. */
    public TaskUpdate whereIn(TaskStatus... statuses) {
        List<String> literals = new ArrayList<>(statuses.length);
        boolean live = true;
        for (TaskStatus s : statuses) {
            literals.add(Dialect.status(s));
            live &= !s.isFinal();
        }
        String condition = statuses.length == 1
                ? "status = " + literals.get(0)
                : "status IN (" + String.join(", ", literals) + ")";
        return and(live ? Dialect.LIVE + " AND " + condition : condition);
    }

    /** Narrows the precondition with another SQL condition. */
    public TaskUpdate and(String condition) {
        return new TaskUpdate(
                dialect, set, where.isEmpty() ? condition : where + " AND " + condition, touch, moves, held);
    }

    /**
     * The statement. Where the dialect moves rows between partitions by a DELETE and an INSERT
     * ({@link Dialect#movesRowsByDeleteAndInsert()}) and this update finishes the task, it is one
     * statement of that form ({@link RowMove}), whose parameters {@link #run} and {@link #bind} take
     * in the same order as the UPDATE's.
     *
     * @return the statement
     */
    public String sql() {
        if (set.isEmpty() || where.isEmpty()) {
            throw new IllegalStateException("a task UPDATE needs assignments and a guard");
        }
        if (deletesAndInserts()) {
            return "WITH moved AS (DELETE FROM dbtasks_task WHERE " + where + " RETURNING *) "
                    + RowMove.insertFrom(assignments(), "moved");
        }
        String table = BY_KEY.matcher(where).find() ? dialect.taskTableByKey() : "dbtasks_task";
        return "UPDATE " + table + " SET " + assignments() + " WHERE " + where;
    }

    /**
     * Only a settle (a RUNNING row under its lease) moves by delete and insert: the readers that lock
     * a RUNNING row either skip locked rows (claims, the rescue) or find it changed anyway. A WAITING
     * or PENDING row another transaction may lock and must find (a dependent counted down by a step's
     * end) moves by UPDATE, and such a reader that meets the moved row fails with a serialization error
     * and runs again.
     */
    private boolean deletesAndInserts() {
        return moves && held && dialect.movesRowsByDeleteAndInsert();
    }

    /**
     * The statement's arguments in its own order: the UPDATE's SET arguments, then its WHERE
     * arguments; the delete-and-insert form takes the WHERE arguments first, then each assignment's
     * in the order of the table's columns.
     */
    private Object[] ordered(Object[] args) {
        if (!deletesAndInserts()) {
            return args;
        }
        java.util.LinkedHashMap<String, String> values = RowMove.parse(assignments());
        java.util.Map<String, Object[]> byColumn = new java.util.HashMap<>();
        int next = 0;
        for (java.util.Map.Entry<String, String> e : values.entrySet()) {
            int n = RowMove.marks(e.getValue());
            byColumn.put(e.getKey(), java.util.Arrays.copyOfRange(args, next, next + n));
            next += n;
        }
        List<Object> out = new ArrayList<>(args.length);
        out.addAll(java.util.Arrays.asList(args).subList(next, args.length));
        for (String column : Dialect.TASK_TABLE_COLUMNS) {
            Object[] own = byColumn.get(column);
            if (own != null) {
                out.addAll(java.util.Arrays.asList(own));
            }
        }
        return out.toArray();
    }

    /**
     * Executes the statement on {@code c} with {@code args} bound in order ({@link Instant}s as
     * timestamps, {@code null} as a NULL string).
     *
     * @return the number of rows changed
     */
    public int run(Connection c, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql())) {
            bind(ps, args);
            return ps.executeUpdate();
        }
    }

    /**
     * Binds {@code args} to a statement prepared from {@link #sql()}: the SET list's arguments, then
     * the WHERE clause's, as for the UPDATE (reordered here for the delete-and-insert form).
     */
    public void bind(PreparedStatement ps, Object... given) throws SQLException {
        Object[] args = ordered(given);
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
    public static boolean checked(int rows, String what) {
        if (rows != 0 && rows != 1) {
            throw new IllegalStateException(what + " changed " + rows + " rows");
        }
        return rows == 1;
    }

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
    public static String lockExpired(Dialect dialect, String columns, int ids) {
        return "SELECT " + columns + " FROM " + dialect.taskTableByKey() + " WHERE id IN ("
                + String.join(", ", java.util.Collections.nCopies(ids, "?")) + ") AND "
                + is("status", TaskStatus.RUNNING)
                + " AND lease_expires_at < " + dialect.now() + " ORDER BY id" + dialect.forUpdateSkipLocked();
    }

    /**
     * The condition that {@code column} holds {@code status}; for a live state also that the row is
     * in the live partition ({@link Dialect#LIVE}), which the state implies, so that the read prunes
     * history.
     *
     * @param column the status column, qualified as the statement needs
     * @param status the state
     * @return the SQL condition
     */
    public static String is(String column, TaskStatus status) {
        String live = status.isFinal() ? "" : column.replaceFirst("status$", "") + Dialect.LIVE + " AND ";
        return "(" + live + column + " = " + Dialect.status(status) + ")";
    }
}
