package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The ceiling: the engine's own best SQL path as plain JDBC on the dbtasks_task table, with no
 * handlers, heartbeats or attempt rows around it, swept over client threads W and claim batch sizes;
 * the best figure of the whole sweep is the ceiling every "x ceiling" of the report divides by
 * ({@link Ratios}). The physical limit does not depend on how many threads a client uses, so no
 * figure is compared with the ceiling at its own W.
 *
 * <p>Pipelined (every sweep point): W claimer threads, each on a connection of its own, claim
 * batches with the engine's claim statement and hand the claimed ids to one or two completion
 * writer threads ({@code --ceiling-writers}, a list swept like the others; {@link #WRITERS_DEFAULT}
 * by default) on connections of their own, which mark whatever has queued up
 * (at most {@link #MAX_COMPLETION} tasks) SUCCEEDED in one statement and commit: group commit, as
 * the engine's single completion writer does, so claims and completions overlap. The clock runs
 * from the first claim until the last completion has committed.
 *
 * <ul>
 *   <li>PostgreSQL: the engine's {@code UPDATE ... WHERE id = ANY(ARRAY(SELECT id ... LIMIT b FOR
 *       UPDATE SKIP LOCKED)) RETURNING id, lease_token}; completion {@code UPDATE ... FROM
 *       unnest(?::bigint[], ?::bigint[])} guarded by the lease token and RUNNING status, as the
 *       engine's batched completion is (without its attempt rows).
 *   <li>MariaDB: {@code SELECT ... FOR UPDATE SKIP LOCKED} and {@code UPDATE} in one READ COMMITTED
 *       transaction, then {@code UPDATE ... WHERE id IN (...) AND lease_token = ...} per batch.
 *   <li>H2 (no SKIP LOCKED): the due ids, then a guarded {@code UPDATE ... WHERE status = 'PENDING'
 *       AND id IN (...)} read back through {@code FINAL TABLE} (the engine's claim), then {@code
 *       UPDATE ... WHERE id IN (...)}.
 * </ul>
 *
 * <p>With attempt rows: after the sweep, its best point is rerun {@link #PAIRS} times as it was and
 * {@link #PAIRS} times with the one write the engine adds to this cycle, each completed task's
 * attempt row inserted in the completion's transaction (the execution history every attempt must
 * leave), alternating. Each kind is reported as one figure of its own series ({@link #RERUN}, {@link
 * #WITH_ATTEMPTS}), divided by the ceiling like every other figure and never taken as the ceiling;
 * the second gives its ratio to the first. They show how much of the distance between the engine and
 * the ceiling that row accounts for. On MariaDB and H2 the row is written with {@code INSERT ...
 * SELECT}, not the engine's multi-row {@code VALUES}: an approximation of the engine's cycle there.
 *
 * <p>Simple (only with {@code --ceiling-simple}): the simplest cycle, kept for comparison: per
 * W of the burn-down list, each thread claims {@link BenchConfig#batchFor(int)} tasks and completes
 * them on its own connection before it claims again. Its figures compete for the best ceiling too.
 */
final class Ceiling implements Scenario {
    /** Completion writers unless configured: two, so one commits while the other collects. */
    static final int WRITERS_DEFAULT = 2;
    /** The most tasks one completion statement marks SUCCEEDED. */
    static final int MAX_COMPLETION = 1000;
    /** The chart and ratio series of every ceiling figure. */
    static final String SERIES = "ceiling";
    /** The series of the best sweep point rerun with attempt rows: not a ceiling figure. */
    static final String WITH_ATTEMPTS = "ceiling-attempts";
    /** The series of the best sweep point rerun as it was, beside those: not a ceiling figure either. */
    static final String RERUN = "ceiling-rerun";
    /** How many times the best point is rerun each way. */
    static final int PAIRS = 2;
    /** The config of the reruns with attempt rows, before the point's details (the summary's key). */
    static final String WITH_ATTEMPTS_CONFIG = "best point rerun with attempt rows";
    /** The config of the reruns without them. */
    static final String RERUN_CONFIG = "best point rerun without attempt rows";

    private static final String ATTEMPT_COLUMNS =
            "task_id, attempt, queue, worker, lease_token, started_at, finished_at, duration_ms, outcome, history_day";
    private static final String DUE =
            "queue = '" + TaskTable.QUEUE + "' AND history_day = 0 AND status = 'PENDING' AND run_at <= ";
    private static final String ORDER = " ORDER BY priority DESC, run_at, id LIMIT ?";
    /** Tells a completion writer that every claimer has finished. */
    private static final List<Claimed> END = Collections.unmodifiableList(new ArrayList<>());

    /** A claimed task: its id and the fencing token its completion is guarded by. */
    private record Claimed(long id, long token) {}

    @Override
    public String name() {
        return "ceiling";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        int tasks = c.burndownTasks();
        List<Result> results = new ArrayList<>();
        int[] best = null; // claimers, batch, writers of the fastest point
        double bestRate = 0;
        for (int writers : c.ceilingWriters()) {
            for (int workers : c.ceilingWorkers()) {
                for (int batch : c.ceilingBatches()) {
                    if ((long) workers * batch > tasks / 2) {
                        // The first round of claims would take over half the backlog: no steady state.
                        Log.line("ceiling: skipping W=" + workers + " batch=" + batch + ", W x batch > tasks / 2");
                        continue;
                    }
                    run.tasks().reset();
                    run.tasks().insertPending(tasks);
                    double seconds = measurePipelined(run, workers, batch, writers, tasks, false);
                    if (tasks / seconds > bestRate) {
                        bestRate = tasks / seconds;
                        best = new int[] {workers, batch, writers};
                    }
                    Result r = Result.throughput(
                            name(),
                            run.db(),
                            "W=" + workers + " batch=" + batch + " writers=" + writers + " pipelined",
                            SERIES,
                            workers,
                            tasks,
                            seconds);
                    Log.result(r);
                    results.add(r);
                }
            }
        }
        if (best != null) {
            results.addAll(attemptRowPairs(run, best[0], best[1], best[2], tasks));
        }
        if (c.ceilingSimple()) {
            for (int workers : c.baselineWorkers()) {
                run.tasks().reset();
                run.tasks().insertPending(tasks);
                int batch = c.batchFor(workers);
                double seconds = measureSimple(run, workers, batch, tasks);
                Result r = Result.throughput(
                        name(),
                        run.db(),
                        "W=" + workers + " batch=" + batch + " simple",
                        SERIES,
                        workers,
                        tasks,
                        seconds);
                Log.result(r);
                results.add(r);
            }
        }
        if (results.isEmpty()) {
            throw new IllegalStateException("ceiling: every sweep point was skipped; raise --tasks or lower"
                    + " --ceiling-workers/--ceiling-batches");
        }
        return results;
    }

    /**
     * The best point rerun {@value #PAIRS} times without attempt rows and {@value #PAIRS} times with
     * them, alternating (without first), so that the cost of the row is read from runs taken side by
     * side rather than against the best of a noisy sweep.
     *
     * @return the reruns without attempt rows and those with them, each as one figure (all their
     *     tasks over all their seconds); the second's config gives its ratio to the first
     */
    private List<Result> attemptRowPairs(BenchRun run, int claimers, int batch, int writers, int tasks)
            throws Exception {
        double without = 0;
        double with = 0;
        for (int pair = 0; pair < PAIRS; pair++) {
            for (boolean attempts : new boolean[] {false, true}) {
                run.tasks().reset();
                run.tasks().insertPending(tasks);
                double seconds = measurePipelined(run, claimers, batch, writers, tasks, attempts);
                if (attempts) {
                    with += seconds;
                } else {
                    without += seconds;
                }
            }
        }
        String point =
                "W=" + claimers + " batch=" + batch + " writers=" + writers + ", " + PAIRS + " alternating pairs";
        long total = (long) PAIRS * tasks;
        Result plain =
                Result.throughput(name(), run.db(), RERUN_CONFIG + ": " + point, RERUN, claimers, total, without);
        Result rows = Result.throughput(
                name(),
                run.db(),
                WITH_ATTEMPTS_CONFIG + ": " + point
                        + String.format(Locale.ROOT, ", x rerun without %.2f", without / with),
                WITH_ATTEMPTS,
                claimers,
                total,
                with);
        Log.result(plain);
        Log.result(rows);
        return List.of(plain, rows);
    }

    /** @param attempts whether each completion also inserts its tasks' attempt rows */
    private double measurePipelined(BenchRun run, int claimers, int batch, int writers, long expected, boolean attempts)
            throws Exception {
        AtomicLong done = new AtomicLong();
        // Bounded hand-off: claimers wait when the writers fall behind, as engine workers do.
        BlockingQueue<List<Claimed>> handoff = new ArrayBlockingQueue<>(Math.max(4, 2 * claimers));
        ExecutorService pool = Executors.newFixedThreadPool(claimers + writers);
        try (HikariDataSource ds = run.pool("bench-ceiling", claimers + writers)) {
            List<Future<?>> claimerFutures = new ArrayList<>();
            List<Future<?>> writerFutures = new ArrayList<>();
            // The first writer's failure: claimers and the END hand-off stop waiting for room once it
            // is set, so a run whose writers all threw fails instead of blocking in put forever.
            AtomicReference<Throwable> writerFailed = new AtomicReference<>();
            long start = System.nanoTime();
            for (int w = 0; w < writers; w++) {
                writerFutures.add(pool.submit(() -> {
                    try {
                        write(ds, run.db(), handoff, done, attempts);
                    } catch (Throwable t) {
                        writerFailed.compareAndSet(null, t);
                        throw t;
                    }
                    return null;
                }));
            }
            for (int t = 0; t < claimers; t++) {
                String owner = "ceiling-" + t;
                claimerFutures.add(pool.submit(() -> {
                    claimLoop(ds, run.db(), owner, batch, handoff, writerFailed);
                    return null;
                }));
            }
            try {
                for (Future<?> f : claimerFutures) {
                    f.get();
                }
            } finally {
                for (int w = 0; w < writers && writerFailed.get() == null; w++) {
                    handOff(handoff, END, writerFailed);
                }
            }
            if (writerFailed.get() != null) {
                // The writers still alive wait for an END that is not coming: shutdownNow ends them.
                throw new IllegalStateException("ceiling: a completion writer failed", writerFailed.get());
            }
            for (Future<?> f : writerFutures) {
                f.get();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            if (done.get() != expected) {
                throw new IllegalStateException("ceiling completed " + done.get() + " of " + expected + " tasks");
            }
            return seconds;
        } finally {
            pool.shutdownNow();
        }
    }

    /** A claimer: claims batches until a claim comes back empty, handing each to the writers. */
    private static void claimLoop(
            HikariDataSource ds,
            Database db,
            String owner,
            int batch,
            BlockingQueue<List<Claimed>> handoff,
            AtomicReference<Throwable> writerFailed)
            throws SQLException, InterruptedException {
        try (Connection c = ds.getConnection()) {
            prepare(c, db);
            while (true) {
                List<Claimed> claimed = claim(c, db, owner, batch);
                if (claimed.isEmpty()) {
                    return;
                }
                if (!handOff(handoff, claimed, writerFailed)) {
                    return; // a writer failed: its future carries the error
                }
            }
        }
    }

    /**
     * Puts {@code item} into the hand-off, waiting for room as {@code put} does, but gives up once a
     * completion writer has failed (which may leave no one to make room).
     *
     * @return {@code true} if handed off, {@code false} if a writer failed first
     */
    static <T> boolean handOff(BlockingQueue<T> handoff, T item, AtomicReference<Throwable> writerFailed)
            throws InterruptedException {
        while (writerFailed.get() == null) {
            if (handoff.offer(item, 50, TimeUnit.MILLISECONDS)) {
                return true;
            }
        }
        return false;
    }

    /** A completion writer: takes whatever has queued up, marks it SUCCEEDED in one statement, commits. */
    private static void write(
            HikariDataSource ds, Database db, BlockingQueue<List<Claimed>> handoff, AtomicLong done, boolean attempts)
            throws SQLException, InterruptedException {
        try (Connection c = ds.getConnection()) {
            prepare(c, db);
            if (attempts && db != Database.POSTGRESQL) {
                // The completion and its attempt rows commit together. On PostgreSQL they are one
                // statement, committed by auto-commit as the engine's is (no COMMIT round trip).
                c.setAutoCommit(false);
            }
            List<List<Claimed>> drained = new ArrayList<>();
            while (true) {
                List<Claimed> first = handoff.take();
                if (first == END) {
                    return;
                }
                List<Claimed> group = new ArrayList<>(first);
                drained.clear();
                boolean end = false;
                while (group.size() < MAX_COMPLETION) {
                    List<Claimed> next = handoff.poll();
                    if (next == null) {
                        break;
                    }
                    if (next == END) {
                        end = true;
                        break;
                    }
                    group.addAll(next);
                }
                complete(c, db, group, attempts);
                done.addAndGet(group.size());
                if (end) {
                    return;
                }
            }
        }
    }

    private double measureSimple(BenchRun run, int threads, int batch, long expected) throws Exception {
        AtomicLong done = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (HikariDataSource ds = run.pool("bench-ceiling", threads)) {
            List<Future<?>> futures = new ArrayList<>();
            long start = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                String owner = "ceiling-" + t;
                futures.add(pool.submit(() -> {
                    simpleCycle(ds, run.db(), owner, batch, done);
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            if (done.get() != expected) {
                throw new IllegalStateException("ceiling completed " + done.get() + " of " + expected + " tasks");
            }
            return seconds;
        } finally {
            pool.shutdownNow();
        }
    }

    /** The simple cycle: claim a batch, complete it on the same connection, again. */
    private static void simpleCycle(HikariDataSource ds, Database db, String owner, int batch, AtomicLong done)
            throws SQLException {
        try (Connection c = ds.getConnection()) {
            prepare(c, db);
            while (true) {
                List<Claimed> claimed = claim(c, db, owner, batch);
                if (claimed.isEmpty()) {
                    return;
                }
                complete(c, db, claimed, false);
                done.addAndGet(claimed.size());
            }
        }
    }

    private static void prepare(Connection c, Database db) throws SQLException {
        if (db == Database.MARIADB) {
            // The engine's claim isolation: no gap locks between claimers.
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
            c.setAutoCommit(false);
        }
    }

    private static List<Claimed> claim(Connection c, Database db, String owner, int batch) throws SQLException {
        return switch (db) {
            case POSTGRESQL -> claimPostgres(c, owner, batch);
            case MARIADB -> claimMariaDb(c, owner, batch);
            case H2 -> claimH2(c, owner, batch);
        };
    }

    private static String claimSet(Database db) {
        String token = switch (db) {
            case POSTGRESQL -> "dbtasks_next_token()";
            case MARIADB -> "NEXTVAL(dbtasks_token_seq)";
            case H2 -> "NEXT VALUE FOR dbtasks_token_seq";
        };
        // The engine's SET list (Dialect.claimSetList), with the lease ending at the claim.
        return "status = 'RUNNING', attempt = attempt + 1, lease_owner = ?, lease_token = " + token
                + ", lease_expires_at = " + db.now() + ", heartbeat_at = " + db.now() + ", started_at = " + db.now()
                + ", updated_at = " + db.now() + ", cancel_requested = FALSE";
    }

    private static List<Claimed> claimPostgres(Connection c, String owner, int batch) throws SQLException {
        Database db = Database.POSTGRESQL;
        // id = ANY(ARRAY(...)): the engine's claim, its subquery evaluated once.
        String sql =
                "UPDATE dbtasks_task SET " + claimSet(db) + " WHERE history_day = 0 AND id = ANY(ARRAY(SELECT id FROM"
                        + " dbtasks_task"
                        + " WHERE " + DUE + db.now() + ORDER + " FOR UPDATE SKIP LOCKED)) RETURNING id, lease_token";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, owner);
            ps.setInt(2, batch);
            return claimed(ps);
        }
    }

    private static List<Claimed> claimMariaDb(Connection c, String owner, int batch) throws SQLException {
        Database db = Database.MARIADB;
        List<Long> ids = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT id FROM dbtasks_task WHERE " + DUE + db.now() + ORDER + " FOR UPDATE SKIP LOCKED")) {
            ps.setInt(1, batch);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
        }
        List<Claimed> claimed = new ArrayList<>(ids.size());
        if (!ids.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement("UPDATE dbtasks_task SET " + claimSet(db)
                    + " WHERE history_day = 0 AND id IN (" + placeholders(ids.size()) + ")")) {
                ps.setString(1, owner);
                bind(ps, 2, ids);
                ps.executeUpdate();
            }
            // One token per claim statement on MariaDB (NEXTVAL is evaluated once per statement).
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT id, lease_token FROM dbtasks_task WHERE id IN (" + placeholders(ids.size()) + ")")) {
                bind(ps, 1, ids);
                claimed = claimed(ps);
            }
        }
        c.commit();
        return claimed;
    }

    private static List<Claimed> claimH2(Connection c, String owner, int batch) throws SQLException {
        Database db = Database.H2;
        while (true) {
            List<Long> due = new ArrayList<>();
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT id FROM dbtasks_task WHERE " + DUE + db.now() + ORDER)) {
                ps.setInt(1, batch);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        due.add(rs.getLong(1));
                    }
                }
            }
            if (due.isEmpty()) {
                return List.of();
            }
            String sql = "SELECT id, lease_token FROM FINAL TABLE (UPDATE dbtasks_task SET " + claimSet(db)
                    + " WHERE history_day = 0 AND status = 'PENDING' AND id IN (" + placeholders(due.size()) + "))";
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, owner);
                bind(ps, 2, due);
                List<Claimed> claimed = claimed(ps);
                if (!claimed.isEmpty()) {
                    return claimed;
                }
            } // every due row went to another thread first: look again
        }
    }

    /** The task table's columns, in its order, read once from the database. */
    private static volatile List<String> taskColumns;

    /**
     * The engine's move of a row into its day of history, as plain SQL: {@code INSERT INTO
     * dbtasks_task (every column) SELECT (each column, or its new value) FROM from}.
     *
     * @param values the new values, {@code column = expression, ...} with no commas inside an
     *     expression
     */
    private static String moveInsert(Connection c, String values, String from) throws SQLException {
        List<String> columns = taskColumns;
        if (columns == null) {
            List<String> read = new ArrayList<>();
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT * FROM dbtasks_task WHERE 1 = 0")) {
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    read.add(rs.getMetaData().getColumnName(i));
                }
            }
            taskColumns = columns = List.copyOf(read);
        }
        java.util.Map<String, String> set = new java.util.HashMap<>();
        for (String one : values.split(",")) {
            int eq = one.indexOf('=');
            set.put(one.substring(0, eq).trim(), one.substring(eq + 1).trim());
        }
        List<String> select = new ArrayList<>(columns.size());
        for (String column : columns) {
            select.add(set.getOrDefault(column, column));
        }
        return "INSERT INTO dbtasks_task (" + String.join(", ", columns) + ") SELECT " + String.join(", ", select)
                + " FROM " + from;
    }

    /**
     * Marks {@code tasks} SUCCEEDED in one statement, each under its own lease token, and commits.
     *
     * @param attempts whether to insert each one's attempt row too, in the same transaction: on
     *     PostgreSQL the engine's own form (the UPDATE's rows fed to the INSERT in one statement),
     *     elsewhere an {@code INSERT ... SELECT} of the rows just completed
     */
    private static void complete(Connection c, Database db, List<Claimed> tasks, boolean attempts) throws SQLException {
        // As the engine's settle: the row moves to its day's partition of history.
        String values = "status = 'SUCCEEDED', finished_at = " + db.now() + ", history_day = "
                + db.historyDay(db.now()) + ", last_error = NULL, lease_owner = NULL, lease_expires_at = NULL,"
                + " cancel_requested = FALSE, updated_at = " + db.now();
        String set = "UPDATE dbtasks_task t SET " + values;
        int updated;
        if (db == Database.POSTGRESQL) {
            // The engine's completion: the rows deleted from the live partition and inserted into
            // their day's (RowMove); status || '' keeps the planner on the key.
            String move = "WITH d AS (SELECT * FROM unnest(?::bigint[], ?::bigint[]) AS d(id, token)),"
                    + " gone AS (DELETE FROM dbtasks_task t USING d"
                    + " WHERE t.id = d.id AND t.lease_token = d.token AND t.history_day = 0"
                    + " AND (t.status || '') = 'RUNNING' RETURNING t.*)";
            String insert = moveInsert(c, values, "gone");
            String sql = attempts
                    ? move + ", done AS (" + insert
                            + " RETURNING id, attempt, queue, lease_token, started_at, history_day)"
                            + " INSERT INTO dbtasks_attempt (" + ATTEMPT_COLUMNS + ") SELECT id, attempt, queue,"
                            + " 'ceiling', lease_token, COALESCE(started_at, clock_timestamp()), clock_timestamp(), 0,"
                            + " 'SUCCEEDED', history_day FROM done"
                    : move + " " + insert;
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setArray(
                        1,
                        c.createArrayOf(
                                "bigint", tasks.stream().map(Claimed::id).toArray()));
                ps.setArray(
                        2,
                        c.createArrayOf(
                                "bigint", tasks.stream().map(Claimed::token).toArray()));
                updated = ps.executeUpdate();
            }
        } else {
            List<Long> ids = tasks.stream().map(Claimed::id).toList();
            try (PreparedStatement ps =
                    c.prepareStatement(set + " WHERE t.history_day = 0 AND t.status = 'RUNNING' AND t.id IN ("
                            + placeholders(ids.size()) + ")")) {
                bind(ps, 1, ids);
                updated = ps.executeUpdate();
            }
            if (attempts) {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO dbtasks_attempt (" + ATTEMPT_COLUMNS
                        + ") SELECT id, attempt, queue, 'ceiling', lease_token, COALESCE(started_at, " + db.now()
                        + "), " + db.now() + ", 0, 'SUCCEEDED', history_day FROM dbtasks_task WHERE id IN ("
                        + placeholders(ids.size()) + ") AND status = 'SUCCEEDED'")) {
                    bind(ps, 1, ids);
                    int inserted = ps.executeUpdate();
                    if (inserted != updated) {
                        throw new IllegalStateException(
                                "ceiling inserted " + inserted + " attempt rows for " + updated + " completions");
                    }
                }
            }
        }
        if (!c.getAutoCommit()) {
            c.commit();
        }
        if (updated != tasks.size()) {
            throw new IllegalStateException("ceiling completed " + updated + " of " + tasks.size() + " claimed tasks");
        }
    }

    private static List<Claimed> claimed(PreparedStatement ps) throws SQLException {
        List<Claimed> claimed = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                claimed.add(new Claimed(rs.getLong(1), rs.getLong(2)));
            }
        }
        return claimed;
    }

    private static void bind(PreparedStatement ps, int first, List<Long> ids) throws SQLException {
        for (int i = 0; i < ids.size(); i++) {
            ps.setLong(first + i, ids.get(i));
        }
    }

    private static String placeholders(int n) {
        return String.join(", ", Collections.nCopies(n, "?"));
    }
}
