package io.dbtasks.cluster;

import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeaseLocks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * The lock test's work: threads take one lock in turn and increment a shared counter row, each
 * write fenced by the grant's token ({@code WHERE last_token < ?}) and logged with the token it
 * replaced. One thread per process stalls now and then past its lease, as a long GC pause would, so
 * that another holder takes over and the staller's late write must be refused.
 */
public final class LockCounter {
    public static final String LOCK = "cluster-counter";
    static final Duration LEASE = Duration.ofMillis(500);
    static final Duration STALL = Duration.ofMillis(800);
    static final long STALL_EVERY_NANOS = Duration.ofSeconds(4).toNanos();

    private LockCounter() {}

    /** Drops and creates {@code lock_counter} (one row at 0) and {@code lock_history}. */
    public static void createTables(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            for (String t : List.of("lock_counter", "lock_history")) {
                try {
                    s.executeUpdate("DROP TABLE " + t);
                } catch (SQLException absent) {
                    // first run
                }
            }
            s.executeUpdate(
                    "CREATE TABLE lock_counter (id INT PRIMARY KEY, n BIGINT NOT NULL, last_token BIGINT NOT NULL)");
            s.executeUpdate("CREATE TABLE lock_history (token BIGINT NOT NULL, prev_token BIGINT NOT NULL,"
                    + " process VARCHAR(100) NOT NULL)");
            s.executeUpdate("INSERT INTO lock_counter (id, n, last_token) VALUES (1, 0, 0)");
        }
    }

    /**
     * Runs {@code threads} incrementing threads for {@code duration}.
     *
     * @return acquisitions, increments (acknowledged), rejected (stale writes refused), stalls,
     *     timeouts (no grant within 10 s)
     */
    public static Map<String, Long> run(LeaseLocks locks, DataSource ds, String process, int threads, Duration duration)
            throws Exception {
        AtomicLong acquisitions = new AtomicLong();
        AtomicLong increments = new AtomicLong();
        AtomicLong rejected = new AtomicLong();
        AtomicLong stalls = new AtomicLong();
        AtomicLong timeouts = new AtomicLong();
        long deadline = System.nanoTime() + duration.toNanos();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                boolean staller = t == 0;
                futures.add(pool.submit(() -> {
                    long lastStall = System.nanoTime();
                    while (System.nanoTime() < deadline) {
                        Optional<Lease> granted = locks.acquire(LOCK, LEASE, Duration.ofSeconds(10));
                        if (granted.isEmpty()) {
                            timeouts.incrementAndGet();
                            continue;
                        }
                        Lease lease = granted.get();
                        acquisitions.incrementAndGet();
                        if (staller && System.nanoTime() - lastStall > STALL_EVERY_NANOS) {
                            stalls.incrementAndGet();
                            lastStall = System.nanoTime();
                            Thread.sleep(STALL.toMillis());
                        }
                        if (increment(ds, lease.token(), process)) {
                            increments.incrementAndGet();
                        } else {
                            rejected.incrementAndGet();
                        }
                        locks.release(lease);
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        Map<String, Long> figures = new LinkedHashMap<>();
        figures.put("acquisitions", acquisitions.get());
        figures.put("increments", increments.get());
        figures.put("rejected", rejected.get());
        figures.put("stalls", stalls.get());
        figures.put("timeouts", timeouts.get());
        return figures;
    }

    /** One fenced increment; {@code false} if a newer token had already written. */
    static boolean increment(DataSource ds, long token, String process) throws SQLException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                long prev;
                try (PreparedStatement ps =
                                c.prepareStatement("SELECT last_token FROM lock_counter WHERE id = 1 FOR UPDATE");
                        ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    prev = rs.getLong(1);
                }
                int n;
                try (PreparedStatement ps = c.prepareStatement(
                        "UPDATE lock_counter SET n = n + 1, last_token = ? WHERE id = 1 AND last_token < ?")) {
                    ps.setLong(1, token);
                    ps.setLong(2, token);
                    n = ps.executeUpdate();
                }
                if (n == 1) {
                    try (PreparedStatement ps = c.prepareStatement(
                            "INSERT INTO lock_history (token, prev_token, process) VALUES (?, ?, ?)")) {
                        ps.setLong(1, token);
                        ps.setLong(2, prev);
                        ps.setString(3, process);
                        ps.executeUpdate();
                    }
                }
                c.commit();
                return n == 1;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            }
        }
    }

    /**
     * Reads the counter and checks the history: sorted by token, each accepted write replaced the
     * token of the one before it (so accepted tokens strictly increase, with no write lost between).
     *
     * @return counter, history (rows), chainBreaks, firstToken, lastToken
     */
    public static Map<String, Long> check(DataSource ds) throws SQLException {
        Map<String, Long> m = new LinkedHashMap<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT n FROM lock_counter WHERE id = 1")) {
                rs.next();
                m.put("counter", rs.getLong(1));
            }
            long rows = 0;
            long breaks = 0;
            long previous = 0;
            long first = 0;
            try (ResultSet rs = s.executeQuery("SELECT token, prev_token FROM lock_history ORDER BY token")) {
                while (rs.next()) {
                    long token = rs.getLong(1);
                    if (rows == 0) {
                        first = token;
                    }
                    if (rs.getLong(2) != previous || token <= previous) {
                        breaks++;
                    }
                    previous = token;
                    rows++;
                }
            }
            m.put("history", rows);
            m.put("chainBreaks", breaks);
            m.put("firstToken", first);
            m.put("lastToken", previous);
        }
        return m;
    }
}
