package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ceiling: the claim-and-complete cycle as plain JDBC on the dbtasks_task table, with no engine
 * around it. W client threads, each on a connection of its own, claim batches of the engine's
 * largest claim size (the claim batch, capped at 5 W: free slots plus claim-ahead) and mark each batch SUCCEEDED in one statement, until
 * a claim comes back empty. No attempt rows, no handler hand-off, no heartbeats: what the database
 * alone allows, and so what every engine figure is divided by.
 *
 * <ul>
 *   <li>PostgreSQL: {@code UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED LIMIT b)
 *       RETURNING id}, then {@code UPDATE ... WHERE id = ANY(?)}.
 *   <li>MariaDB: {@code SELECT ... FOR UPDATE SKIP LOCKED} and {@code UPDATE} in one READ COMMITTED
 *       transaction, then {@code UPDATE ... WHERE id IN (...)}.
 *   <li>H2 (no SKIP LOCKED): the due ids, then a guarded {@code UPDATE ... WHERE status = 'PENDING'
 *       AND id IN (...)} read back through {@code FINAL TABLE} (the engine's claim), then {@code
 *       UPDATE ... WHERE id IN (...)}.
 * </ul>
 */
final class Ceiling implements Scenario {
    private static final String DUE = "queue = '" + TaskTable.QUEUE + "' AND status = 'PENDING' AND run_at <= ";
    private static final String ORDER = " ORDER BY priority DESC, run_at, id LIMIT ?";

    @Override
    public String name() {
        return "ceiling";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        List<Result> results = new ArrayList<>();
        for (int workers : c.baselineWorkers()) {
            run.tasks().reset();
            run.tasks().insertPending(c.burndownTasks());
            int batch = c.batchFor(workers);
            double seconds = measure(run, workers, batch, c.burndownTasks());
            Result r = Result.throughput(
                    name(),
                    run.db(),
                    "W=" + workers + " batch=" + batch,
                    "ceiling",
                    workers,
                    c.burndownTasks(),
                    seconds);
            Log.result(r);
            results.add(r);
        }
        return results;
    }

    private double measure(BenchRun run, int threads, int batch, long expected) throws Exception {
        AtomicLong done = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (HikariDataSource ds = run.pool("bench-ceiling", threads)) {
            List<Future<?>> futures = new ArrayList<>();
            long start = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                String owner = "ceiling-" + t;
                futures.add(pool.submit(() -> {
                    cycle(ds, run.db(), owner, batch, done);
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

    private static void cycle(HikariDataSource ds, Database db, String owner, int batch, AtomicLong done)
            throws SQLException {
        try (Connection c = ds.getConnection()) {
            if (db == Database.MARIADB) {
                c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
                c.setAutoCommit(false);
            }
            while (true) {
                List<Long> ids = switch (db) {
                    case POSTGRESQL -> claimPostgres(c, owner, batch);
                    case MARIADB -> claimMariaDb(c, owner, batch);
                    case H2 -> claimH2(c, owner, batch);
                };
                if (ids.isEmpty()) {
                    return;
                }
                complete(c, db, ids);
                done.addAndGet(ids.size());
            }
        }
    }

    private static String claimSet(Database db) {
        String token = switch (db) {
            case POSTGRESQL -> "nextval('dbtasks_token_seq')";
            case MARIADB -> "NEXTVAL(dbtasks_token_seq)";
            case H2 -> "NEXT VALUE FOR dbtasks_token_seq";
        };
        return "status = 'RUNNING', attempt = attempt + 1, lease_owner = ?, lease_token = " + token
                + ", lease_expires_at = " + db.now() + ", started_at = " + db.now() + ", updated_at = " + db.now();
    }

    private static List<Long> claimPostgres(Connection c, String owner, int batch) throws SQLException {
        Database db = Database.POSTGRESQL;
        String sql = "UPDATE dbtasks_task SET " + claimSet(db) + " WHERE id IN (SELECT id FROM dbtasks_task WHERE "
                + DUE + db.now() + ORDER + " FOR UPDATE SKIP LOCKED) RETURNING id";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, owner);
            ps.setInt(2, batch);
            return ids(ps);
        }
    }

    private static List<Long> claimMariaDb(Connection c, String owner, int batch) throws SQLException {
        Database db = Database.MARIADB;
        List<Long> ids;
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT id FROM dbtasks_task WHERE " + DUE + db.now() + ORDER + " FOR UPDATE SKIP LOCKED")) {
            ps.setInt(1, batch);
            ids = ids(ps);
        }
        if (!ids.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement(
                    "UPDATE dbtasks_task SET " + claimSet(db) + " WHERE id IN (" + placeholders(ids.size()) + ")")) {
                ps.setString(1, owner);
                bind(ps, 2, ids);
                ps.executeUpdate();
            }
        }
        c.commit();
        return ids;
    }

    private static List<Long> claimH2(Connection c, String owner, int batch) throws SQLException {
        Database db = Database.H2;
        while (true) {
            List<Long> due;
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT id FROM dbtasks_task WHERE " + DUE + db.now() + ORDER)) {
                ps.setInt(1, batch);
                due = ids(ps);
            }
            if (due.isEmpty()) {
                return due;
            }
            String sql = "SELECT id FROM FINAL TABLE (UPDATE dbtasks_task SET " + claimSet(db)
                    + " WHERE status = 'PENDING' AND id IN (" + placeholders(due.size()) + "))";
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, owner);
                bind(ps, 2, due);
                List<Long> claimed = ids(ps);
                if (!claimed.isEmpty()) {
                    return claimed;
                }
            } // every due row went to another thread first: look again
        }
    }

    private static void complete(Connection c, Database db, List<Long> ids) throws SQLException {
        String set = "UPDATE dbtasks_task SET status = 'SUCCEEDED', finished_at = " + db.now() + ", updated_at = "
                + db.now() + ", lease_expires_at = NULL WHERE ";
        if (db == Database.POSTGRESQL) {
            try (PreparedStatement ps = c.prepareStatement(set + "id = ANY(?)")) {
                Array array = c.createArrayOf("bigint", ids.toArray());
                ps.setArray(1, array);
                ps.executeUpdate();
            }
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(set + "id IN (" + placeholders(ids.size()) + ")")) {
            bind(ps, 1, ids);
            ps.executeUpdate();
        }
        if (!c.getAutoCommit()) {
            c.commit();
        }
    }

    private static List<Long> ids(PreparedStatement ps) throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                ids.add(rs.getLong(1));
            }
        }
        return ids;
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
