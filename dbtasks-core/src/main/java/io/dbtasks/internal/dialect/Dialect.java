package io.dbtasks.internal.dialect;

import io.dbtasks.TaskStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Everything that differs between databases: the claim statement, time arithmetic on the database
 * clock, how instants are bound and read, and how a duplicate idempotency key shows up. Everything
 * else in the engine is plain SQL shared by all dialects.
 */
public interface Dialect {
    /** The columns every task query selects, in the order {@code TaskRows} reads them. */
    String TASK_COLUMNS = "id, queue, kind, status, priority, attempt, max_attempts, idempotency_key, name,"
            + " reference, payload, run_at, lease_owner, lease_token, lease_expires_at, cancel_requested,"
            + " created_at, updated_at, started_at, finished_at, last_error, backoff, backoff_initial_ms,"
            + " backoff_max_ms, backoff_multiplier, backoff_jitter, timeout_ms, trace_parent,"
            + " concurrency_key, workflow_id";

    /**
     * Every stored column of the task table, in the table's order: what a statement that moves a row
     * by deleting and inserting it must carry over. A test checks it against each database's table.
     */
    List<String> TASK_TABLE_COLUMNS = List.of(
            "id",
            "queue",
            "kind",
            "idempotency_key",
            "name",
            "reference",
            "payload",
            "status",
            "priority",
            "attempt",
            "max_attempts",
            "backoff",
            "backoff_initial_ms",
            "backoff_max_ms",
            "backoff_multiplier",
            "backoff_jitter",
            "timeout_ms",
            "run_at",
            "lease_owner",
            "lease_token",
            "lease_expires_at",
            "heartbeat_at",
            "cancel_requested",
            "created_at",
            "updated_at",
            "started_at",
            "finished_at",
            "last_error",
            "trace_parent",
            "job_target",
            "concurrency_key",
            "workflow_id",
            "step",
            "waiting_for",
            "blocked_by",
            "result",
            "history_day");

    /**
     * Whether an update that finishes a task is written as a DELETE of the live row and an INSERT
     * into its day's partition, in one statement ({@code TaskUpdate.moving}), rather than an UPDATE
     * of the partition key. PostgreSQL: a concurrent lock of a row an UPDATE moved to another
     * partition fails with a serialization error, where a deleted row is passed over.
     *
     * @return whether finishing moves rows by delete and insert
     */
    default boolean movesRowsByDeleteAndInsert() {
        return false;
    }

    /** @return the dialect's name, also the folder of its migrations */
    String name();

    /** @return an SQL expression for the database's current time */
    String now();

    /** @return an SQL expression for the database's current time plus {@code ?} milliseconds */
    String nowPlusMillis();

    /**
     * The time the current statement began: one value wherever it appears in a statement, so that
     * columns meant to be equal (a new row's {@code created_at} and {@code updated_at}) are.
     * {@link #now()} where that is already so.
     *
     * @return an SQL expression for it
     */
    default String statementTime() {
        return now();
    }

    /**
     * The condition that names the live rows of the task table (WAITING, PENDING, RUNNING): the
     * partition of history day 0. Statements that only read or change live tasks state it, so that
     * on a database whose task table is partitioned by history day they read the live partition
     * alone, whatever the size of history.
     */
    String LIVE = "history_day = 0";

    /**
     * A read of live tasks in one state, of one queue and some concurrency keys, as {@code
     * concurrency_key, id}. Binds: the queue, then each key. A read of both PENDING and RUNNING
     * tasks of a key reads each state with its own (a {@code UNION ALL} of two): on PostgreSQL the
     * live partition has no index on the key alone, which would take an entry at every enqueue and
     * every claim of a keyed task, so a PENDING read goes through the per-key claim index, led by the
     * queue and the key, and a RUNNING read through the rescue index (RUNNING tasks are few).
     *
     * @param state the state the tasks are in
     * @param keys how many keys are bound, at least one
     * @return the query
     */
    static String liveOfKeys(TaskStatus state, int keys) {
        return "SELECT concurrency_key, id FROM dbtasks_task WHERE " + LIVE + " AND status = " + status(state)
                + " AND queue = ? AND concurrency_key IN ("
                + String.join(", ", java.util.Collections.nCopies(keys, "?"))
                + ")";
    }

    /**
     * The history day of an instant: whole days since 1970-01-01 UTC, the partition a task finished
     * then belongs to.
     *
     * @param timestamp an SQL expression of a timestamp in the dialect's own type
     * @return an SQL expression of the day, an integer
     */
    String historyDay(String timestamp);

    /**
     * The history day of an instant, as {@link #historyDay} computes it in SQL: whole days since
     * 1970-01-01 UTC.
     *
     * @param t an instant
     * @return its day; negative before 1970
     */
    static int historyDayOf(java.time.Instant t) {
        return (int) Math.floorDiv(t.getEpochSecond(), 86_400L);
    }

    /**
     * @return an SQL expression that draws the next fencing token: greater than every token drawn
     *     before it on this database (on PostgreSQL also across a failover to an asynchronous standby)
     */
    String nextToken();

    /** Binds {@code value} (may be {@code null}) as a timestamp parameter. */
    void setInstant(PreparedStatement ps, int index, Instant value) throws SQLException;

    /** Reads a timestamp column; {@code null} stays {@code null}. */
    Instant getInstant(ResultSet rs, String column) throws SQLException;

    /**
     * Claims up to {@code limit} due PENDING tasks of {@code queue} that {@code claimable} can run
     * (see {@link Claimable}) for {@code owner}: each gets RUNNING, {@code attempt + 1}, a fresh
     * fencing token and a lease of {@code leaseMillis} from the database's now. Runs in its own
     * transaction on {@code c}. Tasks of other kinds or job targets are not read into the result nor
     * changed. The caller does not call it with a {@link Claimable#nothing()} filter.
     *
     * @return the claimed rows, selected with {@link #TASK_COLUMNS}, read by the caller
     */
    <T> List<T> claim(
            Connection c,
            String queue,
            Claimable claimable,
            int limit,
            String owner,
            long leaseMillis,
            RowReader<T> reader)
            throws SQLException;

    /** @return whether {@code e} is a unique-constraint violation */
    boolean isUniqueViolation(SQLException e);

    /**
     * Whether the task and attempt tables are partitioned by history day ({@code history_day}): the
     * live rows in one partition, each day's finished tasks and attempts in partitions of their own,
     * created ahead by {@link #createHistoryDays} and dropped whole by {@link #dropHistoryPartition}.
     * Where false (H2) the tables are not partitioned and retention deletes rows.
     *
     * @return whether history is partitioned by day
     */
    default boolean partitionsHistory() {
        return false;
    }

    /**
     * Creates the partitions of the days {@code fromDay} to {@code toDay} (inclusive) that do not
     * exist yet, of the task and the attempt table. Safe to call from several engines at once: one
     * that finds a partition made meanwhile leaves it.
     *
     * @param c a connection in auto-commit mode
     * @param fromDay the first day, in days since 1970-01-01 UTC
     * @param toDay the last day, not before {@code fromDay}
     * @return how many days got partitions
     * @throws SQLException if the database fails
     */
    default int createHistoryDays(Connection c, int fromDay, int toDay) throws SQLException {
        return 0;
    }

    /**
     * A partition of finished tasks (and the attempt partition of the same name's days).
     *
     * @param name the task partition's name
     * @param fromDay the first history day it holds; {@code -1} for the partition of the rows that
     *     finished before history was partitioned
     * @param toDay the day after the last it holds (exclusive)
     */
    record HistoryPartition(String name, int fromDay, int toDay) {}

    /**
     * @param c a connection
     * @return the partitions of finished tasks, by their first day ascending; the live partition is
     *     not among them
     * @throws SQLException if the database fails
     */
    default List<HistoryPartition> historyPartitions(Connection c) throws SQLException {
        return List.of();
    }

    /**
     * Drops {@code partition} of the task table and the attempt table's partition of the same days,
     * after deleting the idempotency keys of its tasks, in the caller's transaction where the
     * database has transactional DDL (PostgreSQL; MariaDB commits at the DDL).
     *
     * @param c a connection
     * @param partition the partition, as {@link #historyPartitions} listed it
     * @return the keys deleted
     * @throws SQLException if the database fails
     * @throws UnsupportedOperationException where history is not partitioned
     */
    default long dropHistoryPartition(Connection c, HistoryPartition partition) throws SQLException {
        throw new UnsupportedOperationException("history is not partitioned on " + name());
    }

    /**
     * The clause that makes an INSERT into a table with one unique key insert nothing on a
     * duplicate, so that it does not abort the transaction it runs in (PostgreSQL). {@code ""} where
     * a unique violation only fails the statement, and {@link #isUniqueViolation} tells the case.
     */
    default String onConflictDoNothing() {
        return "";
    }

    /**
     * Executes an INSERT that ends with {@link #onConflictDoNothing()} into a table whose key may
     * already hold the row.
     *
     * @return {@code true} if the row was inserted, {@code false} if its key already existed
     */
    default boolean insertIfAbsent(PreparedStatement insert) throws SQLException {
        try {
            int rows = insert.executeUpdate();
            if (rows > 1) {
                throw new IllegalStateException("an INSERT of one row inserted " + rows);
            }
            return rows == 1;
        } catch (SQLException e) {
            if (isUniqueViolation(e)) {
                return false;
            }
            throw e;
        }
    }

    /** @return whether {@code e} asks for the transaction to be retried (deadlock, serialization) */
    default boolean isTransient(SQLException e) {
        return e.getSQLState() != null && e.getSQLState().startsWith("40");
    }

    /**
     * Tells other instances, on commit of {@code c}'s transaction, that {@code queues} have new
     * tasks. A no-op where the database has no notifications; workers then find them by polling.
     */
    default void notifyEnqueued(Connection c, java.util.Set<String> queues) throws SQLException {}

    /** @return whether {@link #notifyEnqueued} sends anything, so that it is worth throttling */
    /**
     * The statement that makes the database end a session of the engine's that stays idle inside a
     * transaction longer than {@code limit}, rolling it back, so that an engine frozen between two
     * statements of a claim or settle transaction (a paused process, a half-open connection) gives its
     * locked rows back after that time instead of after the server's connection timeout (hours). Run
     * once per physical connection the engine borrows, never on a connection the application passes
     * in.
     *
     * @param limit how long a transaction may stay idle; at least one second
     * @return the statement, or empty where the database has no such limit
     */
    default Optional<String> idleInTransactionLimit(java.time.Duration limit) {
        return Optional.empty();
    }

    default boolean signalsEnqueues() {
        return false;
    }

    /**
     * @param connections what {@link #connections} returned
     * @return whether a connection pooler in transaction mode was declared or found behind them, so
     *     that session settings must not be made (they would reach other clients' sessions)
     */
    default boolean behindPooler(javax.sql.DataSource connections) {
        return false;
    }

    /**
     * The DataSource the engine works through, set up for what may sit between it and the server.
     * PostgreSQL: behind a pooler in transaction mode (said by {@code transactionPooling}, or
     * detected when it is {@code null}) every connection sends unnamed statements only; see {@link
     * PostgresPooling}. Other databases: {@code dataSource} itself.
     *
     * @param dataSource the application's DataSource
     * @param transactionPooling {@code true} if a transaction pooler sits in between, {@code false}
     *     if not, {@code null} to detect it
     * @return the DataSource for the engine's own connections (and migrations)
     * @throws java.sql.SQLException if detection cannot reach the database
     */
    default javax.sql.DataSource connections(javax.sql.DataSource dataSource, Boolean transactionPooling)
            throws SQLException {
        return dataSource;
    }

    /**
     * Starts listening for {@link #notifyEnqueued} from any instance, calling {@code onQueue} with
     * each notified queue name. A listener that finds notifications do not reach it (a pooler in
     * transaction mode drops them) says so and stops; workers then find tasks of other instances
     * by polling.
     *
     * @param dataSource where to take the dedicated listening connection from
     * @param onQueue called on the listener's thread with each notified queue name
     * @param pollInterval the workers' poll interval, the fallback the listener names if it stops
     * @return the running listener, to be closed on shutdown; empty where the database has no
     *     notifications
     */
    default Optional<AutoCloseable> listen(
            javax.sql.DataSource dataSource,
            java.util.function.Consumer<String> onQueue,
            java.time.Duration pollInterval) {
        return Optional.empty();
    }

    /**
     * One statement that settles many attempts leaving RUNNING the same way and inserts their attempt
     * rows, where the database has one; the engine otherwise settles a batch with a locking read, one
     * UPDATE per way out and one INSERT. What the task rows get is the caller's, rendered by {@code
     * set} from the table of RUNNING exits, so the dialect restates no column rule. Binds eleven
     * arrays, one element per attempt, in this order: task id, lease token, backoff (ms), error text
     * (for {@code last_error}), duration (ms), worker, outcome, error class, error message, stack trace
     * index (1-based, into the last array; null for none), and the distinct stack traces; an array
     * whose elements would all be null may be bound as SQL NULL. Only rows still RUNNING under the
     * attempt's token and meeting {@code guard} move.
     *
     * @param set renders the SET list from the SQL expressions of a row's own backoff in milliseconds
     *     and its own error text
     * @param guard a further condition on the task row, on its unqualified columns, or {@code null}
     *     for none
     * @param finishes whether the exit finishes the task, which moves its row into a day of history
     * @return the statement, which returns the lease token of each attempt settled, one row each; or
     *     empty where the dialect has none
     */
    default Optional<String> settleManySql(
            java.util.function.BinaryOperator<String> set, String guard, boolean finishes) {
        return Optional.empty();
    }

    /**
     * One INSERT of any number of keyless tasks whose text does not depend on how many there are,
     * where the database has one, so that the driver prepares it once per connection instead of
     * parsing and planning a new multi-row VALUES for each batch size. Binds arrays, one
     * element per task, in this order: queue, kind, name, reference, payload, priority, max attempts,
     * backoff, backoff initial (ms), backoff max (ms), backoff multiplier, backoff jitter, timeout
     * (ms, null for none), trace parent, concurrency key, run at as whole seconds since the Unix epoch and the
     * microseconds after them (both null for now plus the next array's delay), and run after (ms).
     * Eighteen arrays in all. Rows are inserted, and their identity values drawn, in array order;
     * the statement returns {@link #GENERATED_COLUMNS} of each.
     *
     * @return the statement, or empty to insert with a multi-row VALUES
     */
    default Optional<String> insertManySql() {
        return Optional.empty();
    }

    /**
     * An SQL literal for a task status, so that statements name states through {@link TaskStatus}
     * and never as bare text.
     *
     * @param status the status
     * @return the status name as a quoted SQL string literal
     */
    static String status(TaskStatus status) {
        return "'" + status.name() + "'";
    }

    /**
     * The lease guard's "this row is RUNNING" test on {@code column}, as it should be written in an
     * update that finds its rows by primary key.
     *
     * @param column the status column, qualified if need be
     * @return an SQL boolean expression
     */
    default String isRunning(String column) {
        return column + " = " + status(TaskStatus.RUNNING);
    }

    /**
     * How to vacuum the task table, and keep its planner statistics current, where the database
     * needs it done by the engine.
     *
     * @param sizeQuery a query returning one row of three numbers: the task table's dead row
     *     versions (from the statistics collector, which lags by up to a second or so), its size in
     *     pages now (from the file, exact), and its size in pages as of its last statistics (0 if
     *     never gathered)
     * @param vacuum the statement that reclaims the task table's dead rows (and refreshes its
     *     statistics, so plans follow the mix of PENDING and RUNNING rows)
     * @param analyze the statement that only refreshes the task table's statistics (a sample, so
     *     its cost does not grow with the table)
     */
    record TableVacuum(String sizeQuery, String vacuum, String analyze) {}

    /** @return how to vacuum the task table, or empty where the database cleans up after itself */
    default Optional<TableVacuum> tableVacuum() {
        return Optional.empty();
    }

    /**
     * @return whether single enqueues made at the same moment from several threads should be stored
     *     together, one statement for the group (client-side group commit): worth it where each
     *     statement costs a round trip and a commit's flush; not for an embedded database, where the
     *     threads insert in parallel and the hand-over to the one storing costs more than it saves
     */
    default boolean combinesEnqueues() {
        return true;
    }

    /** @return whether {@code INSERT ... RETURNING} reads back inserted rows in the same statement */
    default boolean insertReturning() {
        return false;
    }

    /**
     * The columns of a new task row that the database fills in; every other column of {@link
     * #TASK_COLUMNS} is what the INSERT bound, or a constant. Reading back only these keeps a
     * single-row INSERT's result small: the rest the caller already has.
     */
    String GENERATED_COLUMNS = "id, run_at, created_at, updated_at";

    /**
     * @param insert an INSERT into the task table
     * @return the statement that runs {@code insert} and reads the inserted rows' {@link
     *     #GENERATED_COLUMNS} back, in that order, or empty where the database cannot in one statement
     */
    default Optional<String> insertReadingBack(String insert) {
        return insertReturning() ? Optional.of(insert + " RETURNING " + GENERATED_COLUMNS) : Optional.empty();
    }

    /**
     * How a claim locks concurrency keys where it does not lock their rows in {@code
     * dbtasks_concurrency_key}.
     *
     * @param trying a query over a queue (the first parameter) and an array of keys (the second) that
     *     locks the keys no other transaction holds, without waiting, and returns the others (one
     *     column, the key)
     */
    record KeyLocks(String trying) {}

    /**
     * The claim in claim order within limits in two statements, where the database can.
     *
     * @param lockAndRead locks the first due tasks ({@code FOR UPDATE SKIP LOCKED}) and then the
     *     limited concurrency keys among them, waiting for transactions that hold one, in one fixed
     *     order (so that two such claims never deadlock); binds the due condition's parameters
     *     ({@link #bindDue}), the limit, the queue, and the limited keys as {@code LIKE} patterns
     *     ({@code text[]}, see {@link #likePattern}); returns {@code id, concurrency_key} in claim
     *     order
     * @param countAndStart counts the RUNNING tasks of the limited keys (begun after the key locks were
     *     granted, so it sees every claim of them committed before) and starts the locked tasks whose
     *     key has room, in claim order; binds the locked tasks' ids ({@code bigint[]}), keys ({@code
     *     text[]}) and limits ({@code int[]}, null where none applies) in claim order, the queue, the
     *     limited keys ({@code text[]}), then the owner and the lease in milliseconds; returns the
     *     started rows' {@link #TASK_COLUMNS}
     */
    record InOrderClaim(String lockAndRead, String countAndStart) {}

    /**
     * @param claimable what the claiming engine can run
     * @return the two statements of a claim in claim order within limits, or empty where the claim
     *     takes one statement per step
     */
    default Optional<InOrderClaim> inOrderClaim(Claimable claimable) {
        return Optional.empty();
    }

    /**
     * The claim in claim order within limits under the queue's lock: an exclusive lock of the queue,
     * which every claim of the queue that locks keys instead takes shared before it counts, so that
     * the claim's counts see every claim of the queue committed before, and no other claim starts a
     * task of a limited key of the queue until it commits.
     * Each text holds two statements run in one round trip, in one implicit transaction that ends
     * with them (the connection must be in auto-commit): the lock, whose result is one row to skip,
     * then the claim, begun after the lock was granted.
     *
     * @param withinBound starts the first due tasks if the queue has at most a bound of RUNNING tasks,
     *     whatever their keys: a key's RUNNING tasks are among the queue's, so with the bound at the
     *     smallest limit less the claim's batch no key passes its limit, and one count of the queue
     *     replaces a count per key. The count itself is skipped while the upper bound of the queue's
     *     RUNNING tasks that the last such claim left is within the bound, younger than an age limit,
     *     and not voided since by a claim that counted keys; the claim leaves that bound (or its count)
     *     plus what it started as the next one. Binds the queue (the lock's), the queue, the age limit
     *     in milliseconds and the bound (the last bound's), the queue (the count's), the owner and the
     *     lease in milliseconds, the due condition's parameters ({@link #bindDue}), the bound, the
     *     limit, and the queue (the new bound's); returns the started rows' {@link #TASK_COLUMNS},
     *     none if the count passed the bound or nothing was due
     * @param countingKeys locks the first due tasks, counts the RUNNING tasks of their limited keys and
     *     starts each locked task whose key has room, in claim order, and voids the queue's bound.
     *     Binds the queue (the lock's), the due condition's parameters, the limit, the queue's limits
     *     most specific first as {@code LIKE} patterns ({@code text[]}, see {@link #likePattern}) and
     *     their most running ({@code int[]}), the queue (the count's), the owner and the lease in
     *     milliseconds, then the queue (the bound's); returns the started rows' {@link
     *     #TASK_COLUMNS} and {@code due_count}, how many due tasks it locked, or one row with a null
     *     {@code id} and {@code due_count} if it started none
     */
    record QueueClaim(String withinBound, String countingKeys) {}

    /**
     * @param claimable what the claiming engine can run
     * @return the claims in claim order under the queue's lock, or empty where the database cannot run
     *     them so (no transaction-level lock, or transactions not READ COMMITTED by default)
     */
    default Optional<QueueClaim> queueClaim(Claimable claimable) {
        return Optional.empty();
    }

    /**
     * @param keyPattern a limit's key pattern: an exact key, or {@code *} for any run of characters
     * @return the same as a {@code LIKE} pattern with the default escape character (backslash)
     */
    static String likePattern(String keyPattern) {
        StringBuilder like = new StringBuilder(keyPattern.length() + 4);
        for (char ch : keyPattern.toCharArray()) {
            switch (ch) {
                case '\\', '%', '_' -> like.append('\\').append(ch);
                case '*' -> like.append('%');
                default -> like.append(ch);
            }
        }
        return like.toString();
    }

    /** @return this database's key locks, or empty: see {@link KeyLocks} */
    default Optional<KeyLocks> keyLocks() {
        return Optional.empty();
    }

    /**
     * @param update an UPDATE of the task table
     * @return the statement that runs {@code update} and reads the changed rows' {@link #TASK_COLUMNS}
     *     back as they are after it, or empty where the database cannot in one statement (MariaDB:
     *     read them back after the update, in the same transaction)
     */
    default Optional<String> updateReadingBack(String update) {
        return Optional.empty();
    }

    /**
     * The task table as a statement that finds its rows by primary key should name it, so that it
     * reads and locks through the primary key and nothing else. A guarded UPDATE or locking read that
     * a planner drives from a secondary index instead (the rescue index, when few rows are RUNNING)
     * locks the index entries of other tasks on its way, and waits on their rows while holding
     * them: the order of a deadlock with the rescue, which locks those rows and then changes their
     * entries.
     *
     * @return {@code dbtasks_task}, with an index hint where the database needs one
     */
    default String taskTableByKey() {
        return "dbtasks_task";
    }

    /**
     * A query for the concurrency keys that have PENDING tasks in one queue, in key order, each once,
     * with how many of the entries it read were that key's. Binds: the queue, the key to start after
     * (exclusive; {@code ""} for the first), and a bound. Where {@link #pendingKeysSkip()} is false the
     * bound is how many index entries it reads (a window in key order, so a key with a long backlog
     * can fill it; the caller reads on after the last key); where true, the most keys to return, each
     * found with one index probe.
     *
     * @return the query; its columns are the key and a count
     */
    default String pendingKeys() {
        return "SELECT k, COUNT(*) FROM (SELECT concurrency_key AS k FROM dbtasks_task WHERE queue = ? AND " + LIVE
                + " AND status = " + status(TaskStatus.PENDING)
                + " AND concurrency_key > ? ORDER BY concurrency_key LIMIT ?) w"
                + " GROUP BY k ORDER BY k";
    }

    /**
     * @return whether {@link #pendingKeys()} skips from key to key in the index, so that its bound is
     *     a number of keys, not of entries
     */
    default boolean pendingKeysSkip() {
        return false;
    }

    /**
     * One statement that reads the first due tasks of each of many keys, where the database has one:
     * for each key of an array, its first tasks in claim order through the per-key claim index.
     * Binds: the keys (a {@code varchar} array), {@link #bindDue}'s parameters, the most tasks per key.
     *
     * @param claimable what the claiming engine can run
     * @return the query (columns id, concurrency_key, priority, run_at), or empty: the caller then
     *     reads the keys with a {@code UNION ALL} of one query per key
     */
    default java.util.Optional<String> firstOfKeys(Claimable claimable) {
        return java.util.Optional.empty();
    }

    /**
     * The task table and the condition that a row is a PENDING task of the key bound next, written so
     * that a query for one key's first due tasks in {@link #keyClaimOrder()} reads the per-key claim
     * index in order.
     *
     * @return the condition, with one parameter (the key)
     */
    default String pendingOfKey() {
        return "status = " + status(TaskStatus.PENDING) + " AND concurrency_key = ?";
    }

    /**
     * @return the task table as a query for one key's due tasks names it, with an index hint where the
     *     database needs one
     */
    default String taskTableForKey() {
        return "dbtasks_task";
    }

    /**
     * @return the ORDER BY of a query for one key's due tasks: {@link #CLAIM_ORDER}, written so that
     *     the database reads the per-key claim index in order
     */
    default String keyClaimOrder() {
        return CLAIM_ORDER;
    }

    /** @return the suffix that locks the rows a SELECT reads until the transaction ends */
    default String forUpdate() {
        return " FOR UPDATE";
    }

    /**
     * The suffix that locks the rows a SELECT reads until the transaction ends and leaves out rows
     * another transaction has locked, without waiting for it. Sweeps (rescue, retention) use it so
     * that one row held by a stuck transaction never stalls the rest. PostgreSQL 9.5+, MariaDB
     * 10.6+ and H2 2.x all support {@code SKIP LOCKED}.
     *
     * @return the suffix, with a leading space
     */
    default String forUpdateSkipLocked() {
        return " FOR UPDATE SKIP LOCKED";
    }

    /**
     * Makes the transaction just begun on {@code c} (auto-commit off, no statement run yet) READ
     * COMMITTED, for that transaction only, where the database's default is stricter. A locking read
     * under MariaDB's REPEATABLE READ also locks gaps and the rows it scanned but did not return.
     *
     * @param c a connection whose transaction has not run a statement yet
     * @throws SQLException if the database refuses
     */
    default void readCommittedTransaction(Connection c) throws SQLException {}

    /** @return the suffix that makes a SELECT read the latest committed row in any isolation */
    default String latestCommittedRead() {
        return "";
    }

    /** Reads one row of a result set. */
    @FunctionalInterface
    interface RowReader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    /** The {@code SET} list shared by every dialect's claim. Binds: owner, lease millis. */
    default String claimSetList() {
        return "status = " + status(TaskStatus.RUNNING) + ", attempt = attempt + 1, lease_owner = ?, lease_token = "
                + nextToken()
                + ", lease_expires_at = " + nowPlusMillis() + ", heartbeat_at = " + now() + ", started_at = "
                + now() + ", updated_at = " + now() + ", cancel_requested = FALSE";
    }

    /**
     * The due-task condition shared by every claim: due, PENDING, of the queue, and runnable by
     * {@code claimable}. The claim index serves the queue, status and order; kind and job target
     * are filters on the rows it reads. Binds with {@link #bindDue}.
     *
     * @param claimable what the claiming engine can run, not {@link Claimable#nothing()}
     * @return an SQL boolean expression
     */
    default String dueCondition(Claimable claimable) {
        String condition =
                "queue = ? AND " + LIVE + " AND status = " + status(TaskStatus.PENDING) + " AND run_at <= " + now();
        if (claimable.kinds() != null) {
            condition += " AND kind IN ("
                    + String.join(
                            ", ",
                            java.util.Collections.nCopies(claimable.kinds().size(), "?")) + ")";
        }
        if (claimable.jobTargets() == null) {
            return condition;
        }
        if (claimable.jobTargets().isEmpty()) {
            return condition + " AND job_target IS NULL";
        }
        return condition + " AND (job_target IS NULL OR job_target IN ("
                + String.join(
                        ", ",
                        java.util.Collections.nCopies(claimable.jobTargets().size(), "?")) + "))";
    }

    /**
     * Binds {@link #dueCondition}'s parameters from {@code index} on.
     *
     * @return the next parameter index
     * @throws SQLException if binding fails
     */
    default int bindDue(PreparedStatement ps, int index, String queue, Claimable claimable) throws SQLException {
        int i = index;
        ps.setString(i++, queue);
        if (claimable.kinds() != null) {
            for (String kind : claimable.kinds()) {
                ps.setString(i++, kind);
            }
        }
        if (claimable.jobTargets() != null) {
            for (String target : claimable.jobTargets()) {
                ps.setString(i++, target);
            }
        }
        return i;
    }

    /** The claim order: priority first, then due time, then age. */
    String CLAIM_ORDER = "priority DESC, run_at, id";

    /**
     * The ORDER BY of a query for due tasks of one queue, in {@link #CLAIM_ORDER}, written so that the
     * database reads the claim index in order rather than sorting the due backlog.
     *
     * @return the order
     */
    default String claimOrder() {
        return CLAIM_ORDER;
    }

    /**
     * How a task search matches the value at a payload path in SQL: with the database's JSON
     * functions, or empty where it has none (H2), and the engine then matches payloads in Java.
     *
     * @param c a connection, for what the dialect needs to know of the schema
     * @param path field names or array indexes (digits) into the payload, at least one, each checked
     *     against {@link io.dbtasks.TaskQuery#PATH_SEGMENT}
     * @param value the text the value at the path must equal
     * @return the source and condition, or empty
     * @throws SQLException if reading the schema fails
     */
    default Optional<PayloadSql> payloadSql(Connection c, List<String> path, String value) throws SQLException {
        return Optional.empty();
    }

    /**
     * A further condition that makes {@code column = ?} an exact comparison of code points where the
     * column's collation is not one; the plain equality still selects through the column's index.
     *
     * @param column a text column
     * @return the condition, binding the same value once more, or empty where equality is exact
     */
    default Optional<String> exactTextRecheck(String column) {
        return Optional.empty();
    }

    /** @return whether {@link #payloadSql} answers (the database has JSON path functions) */
    default boolean searchesPayloadsInSql() {
        return false;
    }

    /**
     * @param column a timestamp column
     * @return an SQL expression for the epoch minute of the column (whole minutes since 1970 UTC)
     */
    default String epochMinute(String column) {
        return "CAST(FLOOR(EXTRACT(EPOCH FROM " + column + ") / 60) AS BIGINT)";
    }
}
