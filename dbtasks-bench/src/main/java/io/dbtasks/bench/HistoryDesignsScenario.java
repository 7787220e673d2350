package io.dbtasks.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * Where finished tasks should live, measured on the statements the hot path and retention run.
 * Three designs, each in its own tables built from the task table's own definition ({@code LIKE}),
 * so they carry today's columns and indexes:
 *
 * <ul>
 *   <li><b>single</b>: today, every task in one table; a settle is an {@code UPDATE} of the row;
 *       retention deletes old rows in batches of 1,000.
 *   <li><b>settle-move</b>: a live table and a history table partitioned by day of {@code
 *       finished_at}; the settle moves the row (PostgreSQL: one {@code DELETE ... RETURNING} feeding
 *       an {@code INSERT}; MariaDB and H2: {@code INSERT ... SELECT} and {@code DELETE}); retention
 *       drops the oldest day's partition.
 *   <li><b>mover</b>: the same two tables; the settle updates the live row as today, and a
 *       background mover moves rows finished more than a second ago in batches of 1,000; retention
 *       as settle-move.
 * </ul>
 *
 * Each round burns {@code burndownTasks} PENDING rows down with {@code historyWorkers} threads that
 * claim 50 rows ({@code FOR UPDATE SKIP LOCKED}) and settle them, first with empty history and
 * then beside {@code historyTasks} finished rows loaded into each design's history ({@link
 * HistoryLoader}); the designs take turns within a round, in a rotated order. Then one day of
 * history is removed from each design (database time of its statements and table sizes before and
 * after), and 200 lookups by id are timed against each history. H2 has no partitions: its history
 * table is a plain one, kept so the smoke run covers the statements.
 */
final class HistoryDesignsScenario implements Scenario {
    private static final String QUEUE = "bench-hd";
    private static final int CLAIM = 50;
    private static final int MOVE = 1000;
    private static final int ROUNDS = Integer.getInteger("dbtasks.bench.designs.rounds", 3);
    private static final String SINGLE = "bench_hd_single";
    private static final String LIVE = "bench_hd_live";
    private static final String HISTORY = "bench_hd_history";
    /** Past days of partitions: the loader's span plus the day of the run. */
    private static final int PAST_DAYS = HistoryLoader.SPAN_DAYS + 1;

    private enum Design {
        SINGLE("single"),
        SETTLE_MOVE("settle-move"),
        MOVER("mover");

        final String label;

        Design(String label) {
            this.label = label;
        }
    }

    private Database db;
    private DataSource ds;
    private String moveSelect;
    /** The columns a row is copied by: all but MariaDB's generated ones, which compute themselves. */
    private String columns;

    @Override
    public String name() {
        return "history-designs";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        db = run.db();
        int workers = db == Database.H2 ? 1 : c.historyWorkers();
        List<Result> results = new ArrayList<>();
        try (com.zaxxer.hikari.HikariDataSource pool = run.pool("bench-history-designs", workers + 2)) {
            ds = pool;
            create();
            measure(c, workers, results);
        }
        return results;
    }

    private void measure(BenchConfig c, int workers, List<Result> results) throws Exception {
        try {
            moveSelect = settledColumns();
            for (int round = 0; round < ROUNDS; round++) {
                for (Design d : rotated(round)) {
                    results.add(burn(d, workers, c.burndownTasks(), "history=0", round));
                }
            }
            long size = c.historyTasks();
            long start = System.nanoTime();
            HistoryLoader loader = new HistoryLoader(ds, db);
            loader.insertTasks(SINGLE, size);
            loader.insertTasks(HISTORY, size);
            Log.line(String.format(
                    Locale.ROOT,
                    "history-designs: loaded %d finished rows into each history in %.1f s",
                    size,
                    (System.nanoTime() - start) / 1e9));
            settle();
            HistoryScenario.awaitWriteback(size);
            for (int round = 0; round < ROUNDS; round++) {
                for (Design d : rotated(round)) {
                    results.add(burn(d, workers, c.burndownTasks(), "history=" + size, round));
                }
            }
            results.add(retentionSingle(size));
            results.add(retentionPartitioned(size));
            results.add(lookups(SINGLE, size));
            results.add(lookups(HISTORY, size));
        } finally {
            drop();
        }
    }

    private static List<Design> rotated(int round) {
        List<Design> all = new ArrayList<>(Arrays.asList(Design.values()));
        java.util.Collections.rotate(all, round);
        return all;
    }

    // --- tables -----------------------------------------------------------------------------------

    private void create() throws SQLException {
        drop();
        List<String> sql = new ArrayList<>();
        switch (db) {
            case POSTGRESQL -> {
                // The task table's storage parameters too (fill factor, its eager autovacuum).
                String options = storageOptions();
                sql.add("CREATE TABLE " + SINGLE + " (LIKE dbtasks_task INCLUDING ALL)" + options);
                sql.add("CREATE TABLE " + LIVE + " (LIKE dbtasks_task INCLUDING ALL)" + options);
                sql.add("CREATE TABLE " + HISTORY + " (LIKE dbtasks_task INCLUDING DEFAULTS)"
                        + " PARTITION BY RANGE (finished_at)");
                sql.add("ALTER TABLE " + HISTORY + " ADD PRIMARY KEY (id, finished_at)");
                sql.addAll(historyIndexes());
                LocalDate today = LocalDate.now(ZoneOffset.UTC);
                for (int d = -PAST_DAYS; d <= 2; d++) {
                    LocalDate day = today.plusDays(d);
                    sql.add("CREATE TABLE " + partition(day) + " PARTITION OF " + HISTORY + " FOR VALUES FROM ('" + day
                            + " 00:00:00+00') TO ('" + day.plusDays(1) + " 00:00:00+00')");
                }
            }
            case MARIADB -> {
                sql.add("CREATE TABLE " + SINGLE + " LIKE dbtasks_task");
                sql.add("CREATE TABLE " + LIVE + " LIKE dbtasks_task");
                sql.add("CREATE TABLE " + HISTORY + " LIKE dbtasks_task");
                // LIKE copies the engine's partitioning by history day; each design lays out its own.
                for (String t : List.of(SINGLE, LIVE, HISTORY)) {
                    sql.add("ALTER TABLE " + t + " REMOVE PARTITIONING");
                }
                for (String unique : uniqueIndexes()) {
                    sql.add("ALTER TABLE " + HISTORY + " DROP INDEX " + unique);
                }
                sql.add("ALTER TABLE " + HISTORY + " MODIFY finished_at DATETIME(6) NOT NULL,"
                        + " DROP PRIMARY KEY, ADD PRIMARY KEY (id, finished_at)");
                LocalDate today = LocalDate.now(ZoneOffset.UTC);
                List<String> parts = new ArrayList<>();
                for (int d = -PAST_DAYS; d <= 2; d++) {
                    LocalDate day = today.plusDays(d);
                    parts.add("PARTITION " + partition(day) + " VALUES LESS THAN ('" + day.plusDays(1) + "')");
                }
                sql.add("ALTER TABLE " + HISTORY + " PARTITION BY RANGE COLUMNS (finished_at) ("
                        + String.join(", ", parts) + ")");
            }
            case H2 -> {
                sql.add("CREATE TABLE " + SINGLE + " AS SELECT * FROM dbtasks_task WITH NO DATA");
                sql.add("CREATE TABLE " + LIVE + " AS SELECT * FROM dbtasks_task WITH NO DATA");
                sql.add("CREATE TABLE " + HISTORY + " AS SELECT * FROM dbtasks_task WITH NO DATA");
                for (String t : List.of(SINGLE, LIVE)) {
                    sql.add("ALTER TABLE " + t + " ALTER COLUMN id BIGINT GENERATED BY DEFAULT AS IDENTITY");
                    sql.add("ALTER TABLE " + t + " ADD PRIMARY KEY (id)");
                    sql.add("CREATE INDEX " + t + "_claim ON " + t + " (queue, status, priority DESC, run_at, id)");
                    sql.add("CREATE INDEX " + t + "_finished ON " + t + " (status, finished_at)");
                }
                sql.add("ALTER TABLE " + HISTORY + " ALTER COLUMN id BIGINT GENERATED BY DEFAULT AS IDENTITY");
                sql.add("CREATE INDEX " + HISTORY + "_finished ON " + HISTORY + " (status, finished_at)");
            }
        }
        execute(sql);
    }

    /** @return {@code WITH (...)} of the task table's storage parameters, or nothing */
    private String storageOptions() throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT array_to_string(reloptions, ', ') FROM pg_class"
                        + " WHERE oid = 'dbtasks_task_live'::regclass")) {
            rs.next();
            String options = rs.getString(1);
            return options == null || options.isEmpty() ? "" : " WITH (" + options + ")";
        }
    }

    /** The task table's indexes that hold finished rows, rebuilt on the history table, none unique. */
    private List<String> historyIndexes() throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT indexname, indexdef FROM pg_indexes"
                        + " WHERE tablename = 'dbtasks_task' AND schemaname = current_schema()")) {
            while (rs.next()) {
                String def = rs.getString(2);
                String where = def.contains(" WHERE ") ? def.substring(def.indexOf(" WHERE ")) : "";
                if (rs.getString(1).equals("dbtasks_task_pkey")
                        || where.contains("PENDING")
                        || where.contains("RUNNING")
                        || where.contains("WAITING")) {
                    continue; // the primary key is (id, finished_at); live-only indexes stay empty
                }
                out.add(def.replace("CREATE UNIQUE INDEX", "CREATE INDEX")
                        .replace(rs.getString(1), rs.getString(1).replace("dbtasks_task", HISTORY))
                        .replace("ONLY ", "")
                        .replaceFirst(" ON [a-z_.]*dbtasks_task ", " ON " + HISTORY + " "));
            }
        }
        return out;
    }

    private List<String> uniqueIndexes() throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT DISTINCT index_name FROM information_schema.STATISTICS"
                        + " WHERE table_schema = DATABASE() AND table_name = 'dbtasks_task' AND non_unique = 0"
                        + " AND index_name <> 'PRIMARY'")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    /** @return an SQL literal for the start of {@code day}, UTC */
    private String midnight(LocalDate day) {
        return db == Database.POSTGRESQL ? "'" + day + " 00:00:00+00'" : "'" + day + " 00:00:00'";
    }

    private static String partition(LocalDate day) {
        return HISTORY + "_" + day.toString().replace("-", "");
    }

    private void drop() throws SQLException {
        List<String> sql = new ArrayList<>();
        for (String t : List.of(SINGLE, LIVE, HISTORY)) {
            sql.add("DROP TABLE IF EXISTS " + t + (db == Database.POSTGRESQL ? " CASCADE" : ""));
        }
        execute(sql);
    }

    /**
     * Sets {@link #columns} and returns the select list that turns a RUNNING live row into its
     * settled history row.
     */
    private String settledColumns() throws SQLException {
        List<String> stored = new ArrayList<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT * FROM " + LIVE + " WHERE 1 = 0")) {
            ResultSetMetaData md = rs.getMetaData();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                stored.add(md.getColumnName(i).toLowerCase(Locale.ROOT));
            }
        }
        if (db == Database.MARIADB) {
            try (Connection c = ds.getConnection();
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT column_name FROM information_schema.COLUMNS WHERE"
                            + " table_schema = DATABASE() AND table_name = '" + LIVE
                            + "' AND is_generated <> 'NEVER'")) {
                while (rs.next()) {
                    stored.remove(rs.getString(1).toLowerCase(Locale.ROOT));
                }
            }
        }
        columns = String.join(", ", stored);
        List<String> cols = new ArrayList<>();
        for (String col : stored) {
            cols.add(
                    switch (col) {
                        case "status" -> "'SUCCEEDED'";
                        case "finished_at", "updated_at" -> db.now();
                        case "lease_owner", "lease_expires_at", "heartbeat_at" -> "NULL";
                        default -> col;
                    });
        }
        return String.join(", ", cols);
    }

    private void settle() throws SQLException {
        switch (db) {
            case POSTGRESQL -> {
                execute(List.of("VACUUM (ANALYZE) " + SINGLE, "VACUUM (ANALYZE) " + HISTORY));
                try {
                    execute(List.of("CHECKPOINT"));
                } catch (SQLException e) {
                    Log.line("history-designs: CHECKPOINT refused (" + e.getMessage() + ")");
                }
            }
            case MARIADB -> {
                for (String t : List.of(SINGLE, HISTORY)) {
                    try (Connection c = ds.getConnection();
                            Statement s = c.createStatement();
                            ResultSet rs = s.executeQuery("ANALYZE TABLE " + t)) {
                        while (rs.next()) {
                            // a status row
                        }
                    }
                }
            }
            case H2 -> {
                // nothing to settle
            }
        }
    }

    // --- the hot path -----------------------------------------------------------------------------

    private Result burn(Design d, int workers, int tasks, String history, int round) throws Exception {
        String table = d == Design.SINGLE ? SINGLE : LIVE;
        execute(List.of("DELETE FROM " + table + " WHERE queue = '" + QUEUE + "'"));
        execute(List.of("INSERT INTO " + table + " (queue, kind, status, priority, attempt, max_attempts, backoff,"
                + " backoff_initial_ms, backoff_max_ms, backoff_multiplier, backoff_jitter, run_at, created_at,"
                + " updated_at) SELECT '" + QUEUE + "', 'bench.noop', 'PENDING', 0, 0, 3, 'EXPONENTIAL', 1000, 600000,"
                + " 2.0, 0.2, " + db.now() + ", " + db.now() + ", " + db.now() + " FROM " + db.rows(tasks)));
        if (db == Database.POSTGRESQL) {
            // Every burn-down starts from a vacuumed table: dead rows and index entries the previous
            // design's run left would otherwise be charged to this one.
            execute(List.of("VACUUM (ANALYZE) " + table));
        }
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong moved = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread mover = null;
        if (d == Design.MOVER) {
            mover = new Thread(() -> move(done, moved, failure), "bench-hd-mover");
            mover.start();
        }
        AtomicLong settled = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (int w = 0; w < workers; w++) {
            Thread t = new Thread(
                    () -> {
                        try (Connection c = ds.getConnection()) {
                            c.setAutoCommit(false);
                            while (true) {
                                List<Long> ids;
                                try {
                                    ids = claim(c, table);
                                } catch (SQLException e) {
                                    rollBackVictim(c, e);
                                    continue;
                                }
                                if (ids.isEmpty()) {
                                    // SKIP LOCKED passes over rows another claim holds (on MariaDB
                                    // every row its scan read, not only those it returns): stop only
                                    // once nothing of the queue is left PENDING.
                                    if (pending(c, table) == 0) {
                                        return;
                                    }
                                    Thread.sleep(1);
                                    continue;
                                }
                                while (true) {
                                    try {
                                        settle(c, d, ids);
                                        break;
                                    } catch (SQLException e) {
                                        rollBackVictim(c, e);
                                    }
                                }
                                settled.addAndGet(ids.size());
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "bench-hd-" + w);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        done.set(true);
        if (mover != null) {
            mover.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("history-designs: " + d.label + " failed", failure.get());
        }
        if (settled.get() != tasks) {
            throw new IllegalStateException(
                    "history-designs: " + d.label + " settled " + settled.get() + " of " + tasks + " tasks");
        }
        String config = String.format(
                Locale.ROOT,
                "%s %s W=%d round %d%s load %s",
                d.label,
                history,
                workers,
                round + 1,
                d == Design.MOVER ? ", moved " + moved.get() + " during the burn-down" : "",
                HistoryScenario.load());
        Result r = Result.throughput(name(), db, config, d.label + ", " + history, workers, tasks, seconds);
        Log.result(r);
        return r;
    }

    private long pending(Connection c, String table) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "SELECT COUNT(*) FROM " + table + " WHERE queue = '" + QUEUE + "' AND status = 'PENDING'")) {
            rs.next();
            long n = rs.getLong(1);
            c.commit();
            return n;
        }
    }

    private List<Long> claim(Connection c, String table) throws SQLException {
        List<Long> ids = new ArrayList<>(CLAIM);
        String due = "SELECT id FROM " + table + " WHERE queue = '" + QUEUE + "' AND status = 'PENDING' AND run_at <= "
                + db.now() + " ORDER BY priority DESC, run_at, id LIMIT " + CLAIM + " FOR UPDATE"
                + (db == Database.H2 ? "" : " SKIP LOCKED");
        String set = "status = 'RUNNING', attempt = attempt + 1, lease_owner = 'bench', lease_token = id,"
                + " lease_expires_at = " + db.now() + ", started_at = " + db.now() + ", updated_at = " + db.now();
        if (db == Database.POSTGRESQL) {
            try (PreparedStatement ps = c.prepareStatement(
                            "UPDATE " + table + " SET " + set + " WHERE id IN (" + due + ") RETURNING id");
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
        } else {
            try (PreparedStatement ps = c.prepareStatement(due);
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
            if (!ids.isEmpty()) {
                try (Statement s = c.createStatement()) {
                    s.executeUpdate("UPDATE " + table + " SET " + set + " WHERE id IN (" + list(ids) + ")");
                }
            }
        }
        c.commit();
        return ids;
    }

    private void settle(Connection c, Design d, List<Long> ids) throws SQLException {
        String in = list(ids);
        try (Statement s = c.createStatement()) {
            if (d == Design.SETTLE_MOVE) {
                if (db == Database.POSTGRESQL) {
                    s.executeUpdate("WITH moved AS (DELETE FROM " + LIVE + " WHERE id IN (" + in
                            + ") AND status = 'RUNNING' RETURNING *) INSERT INTO " + HISTORY + " (" + columns
                            + ") SELECT "
                            + moveSelect + " FROM moved");
                } else {
                    s.executeUpdate("INSERT INTO " + HISTORY + " (" + columns + ") SELECT " + moveSelect + " FROM "
                            + LIVE + " WHERE id IN (" + in + ") AND status = 'RUNNING'");
                    s.executeUpdate("DELETE FROM " + LIVE + " WHERE id IN (" + in + ")");
                }
            } else {
                s.executeUpdate("UPDATE " + (d == Design.SINGLE ? SINGLE : LIVE) + " SET status = 'SUCCEEDED',"
                        + " finished_at = " + db.now() + ", updated_at = " + db.now() + ", lease_owner = NULL,"
                        + " lease_expires_at = NULL WHERE id IN (" + in + ") AND status = 'RUNNING'");
            }
        }
        c.commit();
    }

    /** The mover: rows finished more than a second ago leave the live table, 1,000 per transaction. */
    private void move(AtomicBoolean done, AtomicLong moved, AtomicReference<Throwable> failure) {
        String old = "status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at < " + db.millisAgo("1000");
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            while (!done.get()) {
                int n = 0;
                try (Statement s = c.createStatement()) {
                    if (db == Database.POSTGRESQL) {
                        n = s.executeUpdate("WITH moved AS (DELETE FROM " + LIVE + " WHERE id IN (SELECT id FROM "
                                + LIVE + " WHERE " + old + " LIMIT " + MOVE + " FOR UPDATE SKIP LOCKED) RETURNING *)"
                                + " INSERT INTO " + HISTORY + " (" + columns + ") SELECT " + columns + " FROM moved");
                    } else {
                        List<Long> ids = new ArrayList<>();
                        try (ResultSet rs = s.executeQuery("SELECT id FROM " + LIVE + " WHERE " + old + " LIMIT " + MOVE
                                + " FOR UPDATE" + (db == Database.H2 ? "" : " SKIP LOCKED"))) {
                            while (rs.next()) {
                                ids.add(rs.getLong(1));
                            }
                        }
                        n = ids.size();
                        if (n > 0) {
                            s.executeUpdate(
                                    "INSERT INTO " + HISTORY + " (" + columns + ") SELECT " + columns + " FROM " + LIVE
                                            + " WHERE id IN ("
                                            + list(ids) + ")");
                            s.executeUpdate("DELETE FROM " + LIVE + " WHERE id IN (" + list(ids) + ")");
                        }
                    }
                    c.commit();
                } catch (SQLException e) {
                    rollBackVictim(c, e);
                    n = 0;
                }
                moved.addAndGet(n);
                if (n < MOVE) {
                    Thread.sleep(200);
                }
            }
        } catch (Throwable e) {
            failure.compareAndSet(null, e);
        }
    }

    // --- retention and lookups --------------------------------------------------------------------

    /** Deletes the oldest loaded day from the single table, 1,000 rows per statement, unpaced. */
    private Result retentionSingle(long size) throws SQLException {
        String cutoff = midnight(LocalDate.now(ZoneOffset.UTC).minusDays(HistoryLoader.SPAN_DAYS - 1));
        String before = sizes(SINGLE);
        long deleted = 0;
        long start = System.nanoTime();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            while (true) {
                int n = s.executeUpdate(
                        db == Database.MARIADB
                                ? "DELETE FROM " + SINGLE + " WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED')"
                                        + " AND finished_at < " + cutoff + " LIMIT " + MOVE
                                : "DELETE FROM " + SINGLE + " WHERE id IN (SELECT id FROM " + SINGLE
                                        + " WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED') AND finished_at < "
                                        + cutoff + " LIMIT " + MOVE + ")");
                deleted += n;
                if (n < MOVE) {
                    break;
                }
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        String vacuum = "";
        if (db == Database.POSTGRESQL) {
            long v = System.nanoTime();
            execute(List.of("VACUUM " + SINGLE));
            vacuum = String.format(Locale.ROOT, ", VACUUM after it %.2f s", (System.nanoTime() - v) / 1e9);
        }
        String config = String.format(
                Locale.ROOT,
                "single history=%d: one day (%d rows) deleted in batches of %d%s; before %s, after %s",
                size,
                deleted,
                MOVE,
                vacuum,
                before,
                sizes(SINGLE));
        Result r = Result.plain(name(), db, config, Math.max(1, deleted), seconds, null);
        Log.result(r);
        return r;
    }

    /** Drops the oldest loaded day's partition of the history table (H2: deletes the day). */
    private Result retentionPartitioned(long size) throws SQLException {
        LocalDate day = LocalDate.now(ZoneOffset.UTC).minusDays(HistoryLoader.SPAN_DAYS);
        long rows = count(HISTORY + " WHERE finished_at < " + midnight(day.plusDays(1)));
        String before = sizes(HISTORY);
        long start = System.nanoTime();
        switch (db) {
            case POSTGRESQL ->
                execute(List.of(
                        "ALTER TABLE " + HISTORY + " DETACH PARTITION " + partition(day),
                        "DROP TABLE " + partition(day)));
            case MARIADB -> execute(List.of("ALTER TABLE " + HISTORY + " DROP PARTITION " + partition(day)));
            case H2 -> execute(List.of("DELETE FROM " + HISTORY + " WHERE finished_at < " + midnight(day.plusDays(1))));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        String config = String.format(
                Locale.ROOT,
                "partitioned history=%d: one day (%d rows) dropped; before %s, after %s",
                size,
                rows,
                before,
                sizes(HISTORY));
        Result r = Result.plain(name(), db, config, Math.max(1, rows), seconds, null);
        Log.result(r);
        return r;
    }

    /** 200 lookups of a random finished task by id alone (no time to prune partitions by). */
    private Result lookups(String table, long size) throws SQLException {
        long lo;
        long hi;
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT MIN(id), MAX(id) FROM " + table)) {
            rs.next();
            lo = rs.getLong(1);
            hi = rs.getLong(2);
        }
        int n = 200;
        double[] millis = new double[n];
        long start = System.nanoTime();
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT * FROM " + table + " WHERE id = ?")) {
            for (int i = 0; i < n; i++) {
                long t = System.nanoTime();
                ps.setLong(1, ThreadLocalRandom.current().nextLong(lo, hi + 1));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        // read the row
                    }
                }
                millis[i] = (System.nanoTime() - t) / 1e6;
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        Arrays.sort(millis);
        String config = String.format(
                Locale.ROOT,
                "%s history=%d: lookup by id, median %.2f ms, p95 %.2f ms",
                table.equals(SINGLE) ? "single" : "partitioned",
                size,
                millis[n / 2],
                millis[n * 95 / 100]);
        Result r = Result.plain(name(), db, config, n, seconds, null);
        Log.result(r);
        return r;
    }

    private String sizes(String table) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            switch (db) {
                case POSTGRESQL -> {
                    String parts =
                            "(SELECT '" + table + "'::regclass::oid AS r UNION ALL SELECT inhrelid FROM pg_inherits"
                                    + " WHERE inhparent = '" + table + "'::regclass)";
                    try (ResultSet rs = s.executeQuery("SELECT SUM(pg_table_size(r)), SUM(pg_indexes_size(r)),"
                            + " SUM(COALESCE((SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = r), 0)) FROM "
                            + parts + " p")) {
                        rs.next();
                        return mb(rs.getLong(1)) + "+" + mb(rs.getLong(2)) + " MB, dead " + rs.getLong(3);
                    }
                }
                case MARIADB -> {
                    try (ResultSet rs = s.executeQuery("ANALYZE TABLE " + table)) {
                        while (rs.next()) {
                            // a status row
                        }
                    }
                    try (ResultSet rs = s.executeQuery("SELECT data_length, index_length, data_free FROM"
                            + " information_schema.TABLES WHERE table_schema = DATABASE() AND table_name = '" + table
                            + "'")) {
                        rs.next();
                        return mb(rs.getLong(1)) + "+" + mb(rs.getLong(2)) + " MB, free " + mb(rs.getLong(3)) + " MB";
                    }
                }
                default -> {
                    return "n/a";
                }
            }
        }
    }

    private long count(String from) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + from)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private void execute(List<String> sql) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            for (String q : sql) {
                s.execute(q);
            }
        }
    }

    /**
     * Rolls back a transaction the database chose as a deadlock victim (SQLState class 40), as the
     * engine does before it runs the work again; any other failure is rethrown.
     */
    private static void rollBackVictim(Connection c, SQLException e) throws SQLException {
        c.rollback();
        if (e.getSQLState() == null || !e.getSQLState().startsWith("40")) {
            throw e;
        }
    }

    private static String list(List<Long> ids) {
        return ids.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    private static String mb(long bytes) {
        return String.format(Locale.ROOT, "%.1f", bytes / 1048576.0);
    }
}
