package io.dbtasks.internal.dialect;

import io.dbtasks.TaskStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL 12+. Claims with one {@code UPDATE ... WHERE id = ANY(ARRAY(SELECT ... LIMIT n FOR
 * UPDATE SKIP LOCKED)) RETURNING} (the array is computed once, so never more than n rows), so concurrent claimers step over each other's rows instead of waiting. Time is {@code
 * clock_timestamp()}, the wall clock at each call, not the transaction start.
 */
public final class PostgresDialect implements Dialect {
    private static final Logger log = LoggerFactory.getLogger(PostgresDialect.class);

    @Override
    public String name() {
        return "postgresql";
    }

    @Override
    public String historyDay(String timestamp) {
        return "(floor(extract(epoch FROM " + timestamp + ") / 86400))::INTEGER";
    }

    @Override
    public String now() {
        return "clock_timestamp()";
    }

    /**
     * {@inheritDoc}
     *
     * <p>Not {@link #now()}: each {@code clock_timestamp()} reads the clock again, and two of them in
     * one row differed by a microsecond (a new task's {@code updated_at} after its {@code
     * created_at}, seen in CI).
     */
    @Override
    public String statementTime() {
        return "statement_timestamp()";
    }

    @Override
    public String nowPlusMillis() {
        return "(clock_timestamp() + ? * INTERVAL '1 millisecond')";
    }

    /**
     * {@inheritDoc}
     *
     * <p>{@code dbtasks_next_token()} (migration V25): the WAL insert timeline in the high bits, the
     * sequence value in the low 40, so a standby promoted after an asynchronous failover never hands
     * out a token the old primary may have handed out in WAL it never received. The timeline is read
     * in each statement: a value cached on a connection opened before a promotion would be stale.
     */
    @Override
    public String nextToken() {
        return "dbtasks_next_token()";
    }

    @Override
    public void setInstant(PreparedStatement ps, int index, Instant value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            ps.setObject(index, value.atOffset(ZoneOffset.UTC));
        }
    }

    @Override
    public Instant getInstant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    @Override
    public <T> List<T> claim(
            Connection c,
            String queue,
            Claimable claimable,
            int limit,
            String owner,
            long leaseMillis,
            RowReader<T> reader)
            throws SQLException {
        // id = ANY(ARRAY(subquery)), not id IN (subquery): the ARRAY is an InitPlan, evaluated once.
        // As a semi-join the LIMIT ... SKIP LOCKED subquery may be evaluated again (a rescan, or an
        // EvalPlanQual recheck after a concurrent update of a candidate row) and the UPDATE then
        // takes more rows than the LIMIT: suspected cause of a claim of 10 tasks for 2 free slots
        // (ClaimAndLeaseContract on PostgreSQL, full suite, loaded machine).
        String sql = "UPDATE dbtasks_task SET " + claimSetList() + " WHERE " + LIVE
                + " AND id = ANY(ARRAY(SELECT id FROM dbtasks_task"
                + " WHERE " + dueCondition(claimable) + " ORDER BY " + CLAIM_ORDER
                + " LIMIT ? FOR UPDATE SKIP LOCKED))"
                + " RETURNING " + TASK_COLUMNS;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, owner);
            ps.setLong(2, leaseMillis);
            int next = bindDue(ps, 3, queue, claimable);
            ps.setInt(next, limit);
            List<T> rows = new ArrayList<>(limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(reader.read(rs));
                }
            }
            return rows;
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>On PostgreSQL the kinds and job targets are each one bound array ({@code = ANY(?)}), so the
     * statement's text is the same for any number of them and the driver prepares it once.
     */
    @Override
    public String dueCondition(Claimable claimable) {
        String condition = "queue = ? AND " + LIVE + " AND status = " + Dialect.status(TaskStatus.PENDING)
                + " AND run_at <= " + now()
                + (claimable.kinds() == null ? "" : " AND kind = ANY(?)");
        return claimable.jobTargets() == null
                ? condition
                : condition + " AND (job_target IS NULL OR job_target = ANY(?))";
    }

    @Override
    public int bindDue(PreparedStatement ps, int index, String queue, Claimable claimable) throws SQLException {
        int i = index;
        ps.setString(i++, queue);
        Connection c = ps.getConnection();
        if (claimable.kinds() != null) {
            ps.setArray(i++, c.createArrayOf("text", claimable.kinds().toArray()));
        }
        if (claimable.jobTargets() != null) {
            ps.setArray(i++, c.createArrayOf("text", claimable.jobTargets().toArray()));
        }
        return i;
    }

    @Override
    public boolean signalsEnqueues() {
        return true;
    }

    @Override
    public void notifyEnqueued(Connection c, Set<String> queues) throws SQLException {
        if (queues.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify('" + PostgresListener.CHANNEL + "', ?)")) {
            for (String queue : queues) {
                ps.setString(1, queue);
                ps.execute();
            }
        }
    }

    @Override
    public Optional<String> idleInTransactionLimit(java.time.Duration limit) {
        return Optional.of("SET idle_in_transaction_session_timeout = " + Math.max(1000, limit.toMillis()));
    }

    @Override
    public DataSource connections(DataSource dataSource, Boolean transactionPooling) throws SQLException {
        if (Boolean.FALSE.equals(transactionPooling)) {
            return dataSource;
        }
        if (Boolean.TRUE.equals(transactionPooling)) {
            log.info("dbtasks: transaction pooling declared; the engine's connections send unnamed statements only"
                    + " (prepareThreshold=0) and cross-instance wake-up is by polling");
            return PostgresPooling.unnamedStatements(dataSource);
        }
        try (Connection c = dataSource.getConnection()) {
            if (c.unwrap(org.postgresql.PGConnection.class).getPrepareThreshold() == 0) {
                return dataSource; // every statement is unnamed already (prepareThreshold=0 in the URL)
            }
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            Optional<String> pooler = PostgresPooling.detect(dataSource, c);
            if (pooler.isEmpty()) {
                // The LISTEN self-test may still find shared sessions; the connections switch then.
                return PostgresPooling.switchable(dataSource, false);
            }
            log.warn(
                    "dbtasks: a connection pooler or proxy seems to sit between this application and PostgreSQL ({});"
                            + " the engine's connections send unnamed statements only (prepareThreshold=0), because"
                            + " behind a pooler in transaction mode a named statement can run another client's"
                            + " statement. Add prepareThreshold=0 to the JDBC URL so the application's own statements"
                            + " are safe too; build with transactionPooling(false) (dbtasks.transaction-pooling=false)"
                            + " if the connection is direct",
                    pooler.get());
            return PostgresPooling.unnamedStatements(dataSource);
        }
    }

    @Override
    public boolean behindPooler(DataSource connections) {
        if (PostgresPooling.unnamed(connections)) {
            return true;
        }
        // prepareThreshold=0 in the URL is what a pooler in transaction mode asks for: detection is
        // skipped then, so session settings are too.
        try (Connection c = connections.getConnection()) {
            return c.isWrapperFor(org.postgresql.PGConnection.class)
                    && c.unwrap(org.postgresql.PGConnection.class).getPrepareThreshold() == 0;
        } catch (SQLException e) {
            return true; // cannot tell: make no session setting
        }
    }

    @Override
    public Optional<AutoCloseable> listen(
            DataSource dataSource, Consumer<String> onQueue, java.time.Duration pollInterval) {
        return Optional.of(PostgresListener.start(dataSource, onQueue, pollInterval));
    }

    /**
     * {@inheritDoc}
     *
     * <p>On PostgreSQL {@code status || ''}: with statistics taken while no task ran (an idle queue,
     * or a backlog just inserted), the planner estimates one RUNNING row and, given a plain {@code
     * status = RUNNING}, drives a guarded update from the rescue index, scanning every RUNNING row
     * once per row it updates, so a batch of completions costs the square of its size. The
     * expression matches no index, so the primary key is the only path.
     */
    @Override
    public String isRunning(String column) {
        return "(" + column + " || '') = " + Dialect.status(TaskStatus.RUNNING);
    }

    @Override
    public Optional<TableVacuum> tableVacuum() {
        return Optional.of(new TableVacuum(
                "SELECT COALESCE(s.n_dead_tup, 0),"
                        + " pg_relation_size(c.oid) / current_setting('block_size')::bigint, c.relpages"
                        + " FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid"
                        + " WHERE c.oid = 'dbtasks_task_live'::regclass",
                // The live partition is where claims and settles churn; history's day partitions
                // are written once and dropped whole.
                "VACUUM (ANALYZE) dbtasks_task_live",
                "ANALYZE dbtasks_task_live"));
    }

    /**
     * {@inheritDoc}
     *
     * <p>On PostgreSQL the arrays are unnested into rows, the guarded UPDATE joins them by id and
     * token and returns what the attempt INSERT needs: one statement, one round trip, whatever the
     * batch size, and its text the same for any size, so the driver prepares it once.
     */
    @Override
    public Optional<String> settleManySql(
            java.util.function.BinaryOperator<String> set, String guard, boolean finishes) {
        String rows = "WITH d AS (SELECT * FROM unnest(?::bigint[], ?::bigint[], ?::bigint[], ?::text[],"
                + " ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::integer[]) AS d(id, token, backoff_ms,"
                + " error, duration_ms, worker, outcome, error_class, error_message, stack_index)),";
        String held = " WHERE t.id = d.id AND t.lease_token = d.token AND t." + LIVE + " AND " + isRunning("t.status")
                + (guard == null ? "" : " AND " + guard);
        String attempt = " INSERT INTO dbtasks_attempt (task_id, attempt, queue, worker, lease_token, started_at,"
                + " finished_at, duration_ms, outcome, error_class, error_message, stack_trace, history_day)"
                + " SELECT m.id, m.attempt, m.queue, d.worker, m.lease_token, COALESCE(m.started_at, clock_timestamp()),"
                + " statement_timestamp(), d.duration_ms, d.outcome, d.error_class, d.error_message,"
                + " (?::text[])[d.stack_index], " + historyDay("statement_timestamp()")
                + " FROM moved m JOIN d ON d.id = m.id AND d.token = m.lease_token RETURNING lease_token";
        if (!finishes) {
            return Optional.of(rows + " moved AS (UPDATE dbtasks_task t SET " + set.apply("d.backoff_ms", "d.error")
                    + " FROM d" + held + " RETURNING t.id, t.attempt, t.queue, t.lease_token, t.started_at)" + attempt);
        }
        // Finishing moves the rows into their day's partition: a DELETE and an INSERT (RowMove), the
        // INSERT's values computed from the deleted rows and their elements of d.
        return Optional.of(rows + " gone AS (DELETE FROM dbtasks_task t USING d" + held
                + " RETURNING t.*, d.backoff_ms, d.error), moved AS ("
                + RowMove.insertFrom(set.apply("backoff_ms", "error"), "gone")
                + " RETURNING id, attempt, queue, lease_token, started_at)" + attempt);
    }

    @Override
    public boolean movesRowsByDeleteAndInsert() {
        return true;
    }

    @Override
    public Optional<String> insertManySql() {
        return Optional.of("INSERT INTO dbtasks_task (queue, kind, name, reference, payload, status, priority, attempt,"
                + " max_attempts, backoff, backoff_initial_ms, backoff_max_ms, backoff_multiplier, backoff_jitter,"
                + " timeout_ms, trace_parent, concurrency_key, run_at, created_at, updated_at)"
                + " SELECT queue, kind, name, reference, payload, " + Dialect.status(TaskStatus.PENDING)
                + ", priority, 0, max_attempts, backoff, initial_ms, max_ms, multiplier, jitter, timeout_ms,"
                // to_timestamp multiplies in double precision: whole millions of seconds and the rest
                // apart keep every product exact, whatever the year.
                + " trace_parent, concurrency_key, COALESCE(to_timestamp(run_at_s - run_at_s % 1000000)"
                + " + (run_at_s % 1000000) * INTERVAL '1 second' + run_at_us * INTERVAL '1 microsecond',"
                + " clock_timestamp() + after_ms * INTERVAL '1 millisecond'),"
                + " statement_timestamp(), statement_timestamp()"
                + " FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::integer[], ?::integer[],"
                + " ?::text[], ?::bigint[], ?::bigint[], ?::float8[], ?::float8[], ?::bigint[], ?::text[], ?::text[],"
                + " ?::bigint[], ?::integer[], ?::bigint[]) WITH ORDINALITY AS r(queue, kind, name, reference, payload,"
                + " priority, max_attempts, backoff, initial_ms, max_ms, multiplier, jitter, timeout_ms, trace_parent,"
                + " concurrency_key, run_at_s,"
                + " run_at_us, after_ms, ord)"
                + " ORDER BY ord RETURNING " + GENERATED_COLUMNS);
    }

    /**
     * The first key of the transaction-level advisory locks of concurrency keys (the two-integer
     * form, whose lock space does not overlap the single-bigint one): an application's own advisory
     * locks meet these only if they use this number as their first key.
     */
    public static final int KEY_LOCK_SPACE = 0x64627463; // "dbtc"

    /**
     * The first key of the transaction-level advisory lock of a queue with limits ({@code
     * (QUEUE_LOCK_SPACE, hashtext(queue))}): held exclusively by a claim that counts the whole queue
     * ({@link #queueClaim}), shared by every claim that locks and counts keys of the queue.
     */
    public static final int QUEUE_LOCK_SPACE = 0x64627471; // "dbtq"

    /**
     * Takes the shared lock of the queue in column {@code q} ({@link #QUEUE_LOCK_SPACE}) and returns
     * {@code q}; needs its FROM.
     */
    private static final String QUEUE_LOCK_SHARED =
            "SELECT q, pg_advisory_xact_lock_shared(" + QUEUE_LOCK_SPACE + ", hashtext(q)) AS shared";

    /**
     * Takes a value of {@code dbtasks_key_claim_seq} once per row of {@code g}, the CTE that took the
     * queue's lock shared ({@link #QUEUE_LOCK_SHARED}), so after that lock was granted and before the
     * claim commits: a claim under the queue's exclusive lock that finds the sequence moved since the
     * queue's running bound was written counts again ({@link #queueClaim}).
     */
    private static final String KEY_CLAIM_SEQ_NEXT = "SELECT nextval('dbtasks_key_claim_seq') FROM g";

    /**
     * {@inheritDoc}
     *
     * <p>On PostgreSQL the two statements go in one round trip and run in the implicit transaction
     * that lasts until the driver's Sync, which releases the advisory lock; each statement takes its
     * own snapshot only under READ COMMITTED, so these are offered only once the first keyed claim
     * found that the connections' transactions are READ COMMITTED by default ({@link
     * #readCommittedTransaction}). The queue's count and the keys' counts read the partial index of
     * RUNNING tasks (the rescue index), so a claim counting keys reads an entry for every task RUNNING
     * in the database: the live partition has no index by key, since an entry at every claim of a
     * keyed task would cost more (see BENCHMARKS.md). So the claim within the bound counts only when
     * it cannot trust the bound in {@code dbtasks_queue_running} that the last one left (migration
     * V35): one older than the age limit it binds, past the bound, or written before the last value
     * of {@code dbtasks_key_claim_seq}, which every claim that locks keys takes under the queue's
     * shared lock; a claim counting keys deletes it. The claim counting keys reads its due tasks
     * once (a CTE read twice is computed once) and returns its count of them even when it starts
     * none, by a left join from that count.
     */
    @Override
    public Optional<QueueClaim> queueClaim(Claimable claimable) {
        if (!Boolean.FALSE.equals(explicitReadCommitted)) {
            return Optional.empty();
        }
        String lock = "SELECT pg_advisory_xact_lock(" + QUEUE_LOCK_SPACE + ", hashtext(?::text));";
        // b: the bound the last claim of the queue left, if it may be trusted; n: it, or a count. A
        // COALESCE evaluates its second subquery (an InitPlan, run when first used) only if needed.
        // A count is dated at the statement's start, before its snapshot was taken: what it cannot
        // see was started after that.
        String withinBound = lock + " WITH s AS MATERIALIZED (SELECT last_value AS seq FROM dbtasks_key_claim_seq),"
                + " b AS MATERIALIZED (SELECT r.running_bound, r.counted_at FROM dbtasks_queue_running r, s"
                + " WHERE r.queue = ? AND r.claimed_seq = s.seq AND r.counted_at > clock_timestamp() - ?"
                + " * INTERVAL '1 millisecond' AND r.running_bound <= ?),"
                + " n AS MATERIALIZED (SELECT COALESCE((SELECT running_bound FROM b), (SELECT COUNT(*) FROM"
                + " dbtasks_task WHERE queue = ? AND " + LIVE + " AND status = " + Dialect.status(TaskStatus.RUNNING)
                + ")) AS running, COALESCE((SELECT counted_at FROM b), statement_timestamp()) AS counted_at),"
                + " u AS (UPDATE dbtasks_task SET " + claimSetList() + " WHERE " + LIVE
                + " AND id = ANY(ARRAY(SELECT id FROM dbtasks_task WHERE " + dueCondition(claimable)
                + " AND (SELECT running FROM n) <= ? ORDER BY " + CLAIM_ORDER
                + " LIMIT ? FOR UPDATE SKIP LOCKED)) RETURNING " + TASK_COLUMNS + "),"
                + " w AS (INSERT INTO dbtasks_queue_running (queue, running_bound, claimed_seq, counted_at)"
                + " SELECT ?, n.running + (SELECT COUNT(*) FROM u), s.seq, n.counted_at FROM n, s"
                + " ON CONFLICT (queue) DO UPDATE SET running_bound = EXCLUDED.running_bound,"
                + " claimed_seq = EXCLUDED.claimed_seq, counted_at = EXCLUDED.counted_at)"
                + " SELECT * FROM u";
        String countingKeys = lock + " WITH due AS (SELECT id, concurrency_key AS k, row_number() OVER (ORDER BY "
                + CLAIM_ORDER + ") AS ord FROM (SELECT id, concurrency_key, priority, run_at FROM dbtasks_task WHERE "
                + dueCondition(claimable) + " ORDER BY " + CLAIM_ORDER + " LIMIT ? FOR UPDATE SKIP LOCKED) d),"
                + " l AS (SELECT * FROM unnest(?::text[], ?::int[]) WITH ORDINALITY AS l(pat, cap, ord)),"
                + " c AS (SELECT due.id, due.k, due.ord, (SELECT l.cap FROM l WHERE due.k LIKE l.pat ORDER BY l.ord"
                + " LIMIT 1) AS cap FROM due),"
                + " r AS (SELECT concurrency_key AS k, COUNT(*) AS n FROM dbtasks_task WHERE status = "
                + Dialect.status(TaskStatus.RUNNING) + " AND " + LIVE + " AND queue = ? AND concurrency_key ="
                + " ANY(ARRAY(SELECT DISTINCT k FROM c WHERE cap IS NOT NULL)) GROUP BY concurrency_key),"
                + " p AS (SELECT c.id FROM (SELECT c.id, c.k, c.cap, row_number() OVER (PARTITION BY c.k ORDER BY"
                + " c.ord) AS rn FROM c) c LEFT JOIN r ON r.k = c.k WHERE c.cap IS NULL OR c.rn <= c.cap -"
                + " COALESCE(r.n, 0)),"
                + " u AS (UPDATE dbtasks_task SET " + claimSetList() + " WHERE " + LIVE
                + " AND id = ANY(ARRAY(SELECT id FROM p)) RETURNING " + TASK_COLUMNS + "),"
                // The queue's bound no longer holds what this claim starts: the next claim counts.
                + " x AS (DELETE FROM dbtasks_queue_running WHERE queue = ?)"
                + " SELECT u.*, d.n AS due_count FROM (SELECT COUNT(*) AS n FROM due) d LEFT JOIN u ON TRUE";
        return Optional.of(new QueueClaim(withinBound, countingKeys));
    }

    /**
     * {@inheritDoc}
     *
     * <p>On PostgreSQL, transaction-level advisory locks on {@code (KEY_LOCK_SPACE, hashtext(queue,
     * key))}, released at commit or rollback (also behind PgBouncer in transaction mode): a row lock
     * writes the row and logs it in the WAL, and a claim that starts one task of each of a hundred
     * keys spent more on those writes than on the claim itself. Two keys whose hashes meet share a
     * lock, which makes their claims take turns and nothing worse. Each lock takes an entry of the
     * server's shared lock table ({@code max_locks_per_transaction} times {@code max_connections}
     * entries) until the claim commits: one per limited key a claim starts, at most its claim batch.
     * Before them, the statement waits for the queue's lock in shared mode ({@link #QUEUE_LOCK_SPACE};
     * its one-time filter runs first), so that no claim counts keys while one counts the queue.
     */
    @Override
    public Optional<KeyLocks> keyLocks() {
        return Optional.of(new KeyLocks("WITH p AS MATERIALIZED (SELECT ?::text AS q, ?::text[] AS ks),"
                + " g AS MATERIALIZED (" + QUEUE_LOCK_SHARED + " FROM p), e AS MATERIALIZED (" + KEY_CLAIM_SEQ_NEXT
                + ") SELECT k FROM p, unnest(p.ks) AS k WHERE (SELECT COUNT(*) FROM e) >= 0 AND NOT"
                + " pg_try_advisory_xact_lock(" + KEY_LOCK_SPACE + ", hashtext(p.q || chr(1) || k))"));
    }

    /**
     * {@inheritDoc}
     *
     * <p>On PostgreSQL the key locks ride in the locking read: the outer query's one-time filter
     * counts every row of the CTE of lock calls before it returns a row, and that CTE locks in hash
     * order (its subquery's ORDER BY, with DISTINCT, is not flattened into it, so it fixes the order
     * of the calls). Before the first key lock, that CTE waits for the queue's lock in shared mode
     * ({@link #QUEUE_LOCK_SPACE}): the sort of its input reads the joined one-row CTE that takes it.
     * The count, the pick per key and the update are one statement: two round trips and the commit,
     * against the one of a queue without limits.
     */
    @Override
    public Optional<InOrderClaim> inOrderClaim(Claimable claimable) {
        String lockAndRead = "WITH due AS (SELECT id, concurrency_key, priority, run_at FROM dbtasks_task WHERE "
                + dueCondition(claimable) + " ORDER BY " + CLAIM_ORDER + " LIMIT ? FOR UPDATE SKIP LOCKED),"
                + " g AS MATERIALIZED (" + QUEUE_LOCK_SHARED + " FROM (SELECT ?::text AS q) p),"
                + " e AS MATERIALIZED (" + KEY_CLAIM_SEQ_NEXT + "),"
                + " locked AS (SELECT pg_advisory_xact_lock(" + KEY_LOCK_SPACE + ", h) FROM (SELECT DISTINCT"
                + " hashtext(g.q || chr(1) || concurrency_key) AS h FROM due, g WHERE concurrency_key LIKE"
                + " ANY(?::text[]) ORDER BY h) s)"
                + " SELECT id, concurrency_key FROM due WHERE (SELECT COUNT(*) FROM locked) + (SELECT COUNT(*) FROM e)"
                + " >= 0 ORDER BY "
                + CLAIM_ORDER;
        String countAndStart = "WITH c AS (SELECT * FROM unnest(?::bigint[], ?::text[], ?::int[]) WITH ORDINALITY"
                + " AS c(id, k, lim, ord)),"
                + " r AS (SELECT concurrency_key AS k, COUNT(*) AS n FROM dbtasks_task WHERE status = "
                + Dialect.status(TaskStatus.RUNNING) + " AND " + LIVE
                + " AND queue = ? AND concurrency_key = ANY(?::text[])"
                + " GROUP BY concurrency_key),"
                + " p AS (SELECT c.id FROM (SELECT c.id, c.k, c.lim, row_number() OVER (PARTITION BY c.k ORDER BY"
                + " c.ord) AS rn FROM c) c LEFT JOIN r ON r.k = c.k WHERE c.lim IS NULL OR c.rn <= c.lim -"
                + " COALESCE(r.n, 0))"
                + " UPDATE dbtasks_task SET " + claimSetList() + " WHERE " + LIVE + " AND status = "
                + Dialect.status(TaskStatus.PENDING) + " AND id = ANY(ARRAY(SELECT id FROM p)) RETURNING "
                + TASK_COLUMNS;
        return Optional.of(new InOrderClaim(lockAndRead, countAndStart));
    }

    /**
     * Whether the transactions of this engine's connections need an explicit READ COMMITTED: unknown
     * (null) until the first keyed claim asks the server, then whether the level it found was
     * stricter (a pool or database configured for REPEATABLE READ or SERIALIZABLE).
     */
    private volatile Boolean explicitReadCommitted;

    /**
     * {@inheritDoc}
     *
     * <p>On PostgreSQL READ COMMITTED is the default, and a keyed claim counts a key's RUNNING tasks
     * in a statement begun after the key's lock was granted, which sees the claims committed before
     * it only under that level. The first call asks the server for the level of the transaction just
     * begun ({@code SHOW}, which takes no snapshot); only where it is stricter does this and every
     * later call set the level with {@code SET TRANSACTION}, one round trip more per claim.
     */
    @Override
    public void readCommittedTransaction(Connection c) throws SQLException {
        Boolean explicit = explicitReadCommitted;
        if (explicit == null) {
            try (java.sql.Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SHOW transaction_isolation")) {
                explicit = rs.next() && !"read committed".equalsIgnoreCase(rs.getString(1));
            }
            explicitReadCommitted = explicit;
        }
        if (explicit) {
            try (java.sql.Statement s = c.createStatement()) {
                s.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
            }
        }
    }

    @Override
    public Optional<String> updateReadingBack(String update) {
        return Optional.of(update + " RETURNING " + TASK_COLUMNS);
    }

    @Override
    public boolean insertReturning() {
        return true; // PostgreSQL
    }

    @Override
    public boolean partitionsHistory() {
        return true;
    }

    /** Through the migration's function, which runs as the tables' owner (see V30). */
    @Override
    public int createHistoryDays(Connection c, int fromDay, int toDay) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT dbtasks_create_history_days(?, ?)")) {
            ps.setInt(1, fromDay);
            ps.setInt(2, toDay);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getInt(1) : 0;
            }
        }
    }

    @Override
    public List<HistoryPartition> historyPartitions(Connection c) throws SQLException {
        List<HistoryPartition> partitions = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT p.relname FROM pg_inherits i"
                        + " JOIN pg_class p ON p.oid = i.inhrelid WHERE i.inhparent = 'dbtasks_task'::regclass");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                String name = rs.getString(1);
                if (name.equals("dbtasks_task_legacy")) {
                    partitions.add(new HistoryPartition(name, -1, 0));
                } else if (name.matches("dbtasks_task_p\\d{8}")) {
                    int day = (int) java.time.LocalDate.parse(
                                    name.substring("dbtasks_task_p".length()),
                                    java.time.format.DateTimeFormatter.BASIC_ISO_DATE)
                            .toEpochDay();
                    partitions.add(new HistoryPartition(name, day, day + 1));
                }
            }
        }
        partitions.sort(java.util.Comparator.comparingInt(HistoryPartition::fromDay));
        return partitions;
    }

    /** Through the migration's function, which runs as the tables' owner (see V30). */
    @Override
    public long dropHistoryPartition(Connection c, HistoryPartition partition) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT dbtasks_drop_history_day(?)")) {
            ps.setInt(1, partition.fromDay());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0;
            }
        }
    }

    @Override
    public String onConflictDoNothing() {
        return " ON CONFLICT DO NOTHING";
    }

    @Override
    public boolean isUniqueViolation(SQLException e) {
        return "23505".equals(e.getSQLState());
    }

    private volatile long ginCheckedAt = Long.MIN_VALUE;
    private volatile boolean ginIndexed;

    /**
     * {@code payload::jsonb #>> path = value}. With paths of field names only, the search also
     * requires that the payload contain the value as JSON ({@code @>}, one document per way the
     * value may be typed), which an optional GIN index on {@code (payload::jsonb)} can serve. With
     * such an index on the task table, that containment selects the rows in a subquery kept apart
     * from the outer {@code ORDER BY id DESC LIMIT} by {@code OFFSET 0} (the planner does not
     * flatten it): otherwise the planner, expecting many matches, walks the primary key backwards
     * and reads the whole table when the value is rare. The exact path comparison decides.
     */
    @Override
    public Optional<PayloadSql> payloadSql(Connection c, List<String> path, String value) throws SQLException {
        List<String> containment = containment(path, value);
        String anyContains = "("
                + String.join(
                        " OR ",
                        containment.stream()
                                .map(x -> "payload::jsonb @> ?::jsonb")
                                .toList())
                + ")";
        String source = "dbtasks_task";
        List<Object> sourceArgs = List.of();
        List<Object> args = new ArrayList<>();
        StringBuilder condition = new StringBuilder();
        if (!containment.isEmpty() && ginIndexed(c)) {
            source = "(SELECT * FROM dbtasks_task WHERE " + anyContains + " OFFSET 0) dbtasks_task";
            sourceArgs = List.copyOf(containment);
        } else if (!containment.isEmpty()) {
            condition.append(anyContains).append(" AND ");
            args.addAll(containment);
        }
        condition.append("payload::jsonb #>> ?::text[] = ?");
        // Each element quoted: unquoted, NULL in an array literal is an SQL null, not a field name.
        args.add("{\"" + String.join("\",\"", path) + "\"}");
        args.add(value);
        return Optional.of(new PayloadSql(source, sourceArgs, condition.toString(), args));
    }

    /** @return whether the task table has a GIN index, looked up at most once a minute */
    private boolean ginIndexed(Connection c) throws SQLException {
        long now = System.nanoTime();
        if (ginCheckedAt == Long.MIN_VALUE || now - ginCheckedAt > 60_000_000_000L) {
            try (PreparedStatement ps = c.prepareStatement(
                            "SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid"
                                    + " JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_am a ON a.oid = x.relam"
                                    + " WHERE t.relname = 'dbtasks_task' AND a.amname = 'gin'"
                                    + " AND t.relnamespace = to_regnamespace(current_schema())::oid)");
                    ResultSet rs = ps.executeQuery()) {
                rs.next();
                ginIndexed = rs.getBoolean(1);
            }
            ginCheckedAt = now;
        }
        return ginIndexed;
    }

    /**
     * The JSON documents a payload must contain for the search to match, one per way the value may
     * be typed (always as a string; also as a number or boolean when it reads as one); empty when the
     * path indexes into an array, which containment cannot say.
     */
    static List<String> containment(List<String> path, String value) {
        if (path.stream().anyMatch(seg -> seg.matches("[0-9]+"))) {
            return List.of();
        }
        List<String> values = new ArrayList<>();
        values.add(jsonString(value));
        String v = value.trim();
        if (v.equals(value)
                && (v.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")
                        || v.equals("true")
                        || v.equals("false"))) {
            values.add(v);
        }
        List<String> docs = new ArrayList<>();
        for (String doc : values) {
            for (int i = path.size() - 1; i >= 0; i--) {
                doc = "{" + jsonString(path.get(i)) + ":" + doc + "}";
            }
            docs.add(doc);
        }
        return docs;
    }

    /** @return {@code s} as a JSON string literal */
    static String jsonString(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (ch < 0x20) {
                        b.append(String.format("\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    @Override
    public boolean searchesPayloadsInSql() {
        return true;
    }

    @Override
    public String pendingKeys() {
        // PostgreSQL has no skip scan: each step of the recursion finds the next key with one probe of
        // the per-key claim index, and the outer LIMIT ends the recursion.
        String pending = " " + LIVE + " AND status = " + Dialect.status(TaskStatus.PENDING) + " AND ";
        return "WITH RECURSIVE k(key, queue) AS ((SELECT concurrency_key, queue FROM dbtasks_task WHERE queue = ? AND"
                + pending + "concurrency_key > ? ORDER BY concurrency_key LIMIT 1) UNION ALL"
                + " SELECT (SELECT t.concurrency_key FROM dbtasks_task t WHERE t.queue = k.queue AND t."
                + pending.trim()
                + " t.concurrency_key > k.key ORDER BY t.concurrency_key LIMIT 1), k.queue FROM k"
                + " WHERE k.key IS NOT NULL) SELECT key, 1 FROM k WHERE key IS NOT NULL LIMIT ?";
    }

    @Override
    public Optional<String> firstOfKeys(Claimable claimable) {
        // One plan for any number of keys: a LATERAL index scan per key, stopped by its LIMIT.
        return Optional.of("SELECT t.id, t.concurrency_key, t.priority, t.run_at FROM unnest(?::varchar[]) AS k(key)"
                + " CROSS JOIN LATERAL (SELECT id, concurrency_key, priority, run_at FROM dbtasks_task WHERE "
                + dueCondition(claimable) + " AND concurrency_key = k.key ORDER BY " + CLAIM_ORDER + " LIMIT ?) t");
    }

    @Override
    public boolean pendingKeysSkip() {
        return true;
    }
}
