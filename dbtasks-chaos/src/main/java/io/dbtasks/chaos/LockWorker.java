package io.dbtasks.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeaseLocks;
import io.dbtasks.lock.LeaseLostException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * A lock-workload process: {@code threads} threads take one lock in turn with {@link
 * LeaseLocks#withLock(String, Duration, Duration, io.dbtasks.lock.LeasedWork)}, work 50 to 150 ms
 * under it and increment a counter row, each write fenced by the grant's token ({@code WHERE last_token < token}) and recorded
 * in {@code chaos_lock_history} in commit order. The parent pauses the whole process ({@code
 * SIGSTOP}) past the lease now and then, so another process takes over and the paused holder's late
 * write must be refused and its {@code withLock} must report the takeover. Every {@code withLock} is
 * logged to {@code chaos_lock_log} with its token, when the grant and the work's end were seen (wall
 * clock, microseconds), whether its write was accepted, and whether it reported a lost lease.
 *
 * <p>Arguments: JDBC URL, process name, threads, seconds, lease in milliseconds. Prints {@code
 * FIGURES k=v ...} before it exits.
 */
public final class LockWorker {
    /** The lock's name. */
    public static final String LOCK = "chaos-counter";

    private LockWorker() {}

    /**
     * @param args JDBC URL, process name, threads, seconds, lease (ms)
     * @throws Exception if the workload cannot run
     */
    public static void main(String[] args) throws Exception {
        String process = args[1];
        int threads = Integer.parseInt(args[2]);
        long deadline =
                System.nanoTime() + Duration.ofSeconds(Long.parseLong(args[3])).toNanos();
        Duration lease = Duration.ofMillis(Long.parseLong(args[4]));
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(args[0]);
        hc.setMaximumPoolSize(threads * 2 + 4);
        hc.setConnectionTimeout(5_000);
        AtomicLong runs = new AtomicLong();
        AtomicLong accepted = new AtomicLong();
        AtomicLong rejected = new AtomicLong();
        AtomicLong reported = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        try (HikariDataSource ds = new HikariDataSource(hc)) {
            DbTasks tasks = DbTasks.builder(ds).workerId(process).workers(false).build();
            LeaseLocks locks = tasks.locks();
            System.out.println("READY " + process);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    while (System.nanoTime() < deadline) {
                        long[] token = {0};
                        long[] granted = {0};
                        long[] workEnd = {0};
                        boolean[] ok = {false};
                        boolean lost = false;
                        boolean ran;
                        try {
                            ran = locks.withLock(LOCK, lease, Duration.ofSeconds(10), l -> {
                                granted[0] = micros();
                                token[0] = l.token();
                                Thread.sleep(50 + ThreadLocalRandom.current().nextInt(100)); // work under the lock
                                ok[0] = increment(ds, l, process);
                                workEnd[0] = micros();
                            });
                        } catch (LeaseLostException e) {
                            ran = true;
                            lost = true;
                        } catch (RuntimeException e) {
                            errors.incrementAndGet();
                            if (token[0] != 0) { // the work ran and failed: logged, so the checker sees it
                                log(ds, token[0], process, granted[0], micros(), ok[0], false);
                            }
                            continue;
                        }
                        if (!ran || token[0] == 0) {
                            continue;
                        }
                        if (workEnd[0] == 0) {
                            workEnd[0] = micros();
                        }
                        runs.incrementAndGet();
                        (ok[0] ? accepted : rejected).incrementAndGet();
                        if (lost) {
                            reported.incrementAndGet();
                        }
                        log(ds, token[0], process, granted[0], workEnd[0], ok[0], lost);
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
            pool.shutdownNow();
            tasks.close();
        }
        System.out.println("FIGURES runs=" + runs + " accepted=" + accepted + " rejected=" + rejected + " reported="
                + reported + " errors=" + errors);
        System.exit(0);
    }

    static long micros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    /** One fenced increment; {@code false} if a newer token had already written. */
    static boolean increment(DataSource ds, Lease lease, String process) throws SQLException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try {
                long seq;
                try (PreparedStatement ps =
                                c.prepareStatement("SELECT n FROM chaos_lock_counter WHERE id = 1 FOR UPDATE");
                        ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    seq = rs.getLong(1) + 1;
                }
                int n;
                try (PreparedStatement ps = c.prepareStatement(
                        "UPDATE chaos_lock_counter SET n = n + 1, last_token = ? WHERE id = 1 AND last_token < ?")) {
                    ps.setLong(1, lease.token());
                    ps.setLong(2, lease.token());
                    n = ps.executeUpdate();
                }
                if (n == 1) {
                    try (PreparedStatement ps = c.prepareStatement(
                            "INSERT INTO chaos_lock_history (seq, token, process) VALUES (?, ?, ?)")) {
                        ps.setLong(1, seq);
                        ps.setLong(2, lease.token());
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

    private static void log(
            DataSource ds, long token, String process, long granted, long workEnd, boolean accepted, boolean reported) {
        for (int i = 0; i < 20; i++) {
            try (Connection c = ds.getConnection();
                    PreparedStatement ps = c.prepareStatement("INSERT INTO chaos_lock_log (token, process, granted_us,"
                            + " work_end_us, accepted, reported) VALUES (?, ?, ?, ?, ?, ?)")) {
                ps.setLong(1, token);
                ps.setString(2, process);
                ps.setLong(3, granted);
                ps.setLong(4, workEnd);
                ps.setInt(5, accepted ? 1 : 0);
                ps.setInt(6, reported ? 1 : 0);
                ps.executeUpdate();
                return;
            } catch (SQLException e) {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
