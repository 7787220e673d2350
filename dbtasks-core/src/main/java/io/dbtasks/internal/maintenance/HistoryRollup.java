package io.dbtasks.internal.maintenance;

import io.dbtasks.DbTasksException;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.completion.HistoryCounts;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeaseLocks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts closed hours of finished tasks into {@code dbtasks_history_count}, on the engine's
 * scheduler, so that the overview ({@code stateCounts}) adds up counts instead of scanning history.
 * One engine of the cluster at a time rolls up (lease lock {@value #LOCK}).
 *
 * <p>Hours are counted in order: each run starts after the newest counted hour (at the oldest
 * finished task the first time), finds the next hour that holds a finished task with one index
 * seek per finished state (an empty hour needs no row), and counts it in its own transaction
 * ({@link HistoryCounts#countHour}), until it reaches the hours not yet closed (an hour closes
 * {@link HistoryCounts#GRACE} after its end, by the database clock) or has counted {@value
 * #HOURS_PER_RUN} hours: a backfill of a long history goes a bounded step per run and never holds a
 * long transaction. Counting in order is what lets a reader take every finished row before the end
 * of the newest counted hour from the counts and every later one from the task table.
 *
 * <p>Thread-safe; runs are meant to be serialized by the lock.
 */
public final class HistoryRollup {
    static final String LOCK = "dbtasks.history-counts";

    /** The most hours one run counts. */
    public static final int HOURS_PER_RUN = 240;

    /** How often a started engine rolls up. */
    public static final Duration INTERVAL = Duration.ofMinutes(5);

    private static final Logger log = LoggerFactory.getLogger(HistoryRollup.class);

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final LeaseLocks locks;
    private final HistoryCounts counts;

    /**
     * @param jdbc connections
     * @param dialect the database's dialect
     * @param locks the lease locks that keep one engine rolling up at a time
     */
    public HistoryRollup(Jdbc jdbc, Dialect dialect, LeaseLocks locks) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.locks = locks;
        this.counts = new HistoryCounts(dialect);
    }

    /** One run, if this engine gets the lock; failures are logged and retried at the next run. */
    public void run() {
        try {
            Optional<Lease> lease = locks.tryAcquire(LOCK, Duration.ofMinutes(30));
            if (lease.isEmpty()) {
                return; // another engine is rolling up
            }
            try {
                rollUp(HOURS_PER_RUN);
            } finally {
                locks.release(lease.get());
            }
        } catch (DbTasksException | IllegalStateException e) {
            log.warn("Counting finished tasks per hour failed; it runs again at the next interval", e);
        }
    }

    /**
     * Counts up to {@code maxHours} closed hours that hold finished tasks and are not counted yet,
     * oldest first, each in its own transaction.
     *
     * @param maxHours the most hours to count, at least 1
     * @return how many hours were counted
     * @throws IllegalArgumentException if {@code maxHours} is below 1
     * @throws DbTasksException if the database fails; hours counted before stay counted
     */
    public int rollUp(int maxHours) {
        if (maxHours < 1) {
            throw new IllegalArgumentException("maxHours must be at least 1, got " + maxHours);
        }
        long start = System.nanoTime();
        Instant[] bounds = jdbc.withConnection(
                "Find the hours to count", c -> new Instant[] {counts.countedUpTo(c), closedBefore(c)});
        Instant from = bounds[0];
        Instant closed = bounds[1];
        int counted = 0;
        while (counted < maxHours) {
            Instant after = from;
            Instant next = jdbc.withConnection("Find the next hour to count", c -> firstFinished(c, after));
            if (next == null) {
                break;
            }
            Instant hour = HistoryCounts.hourOf(next);
            if (hour.plus(HistoryCounts.HOUR).isAfter(closed)) {
                break;
            }
            // A deadlock victim's transaction was rolled back whole, so it may run again.
            boolean done = Jdbc.retryingDeadlocks(() -> jdbc.inTransaction("Count finished tasks of " + hour, c -> {
                dialect.readCommittedTransaction(c);
                return counts.countHour(c, hour);
            }));
            if (done) {
                counted++;
            }
            from = hour.plus(HistoryCounts.HOUR);
        }
        if (counted > 0) {
            log.info(
                    "dbtasks counted the finished tasks of {} hour(s), up to {}, in {} ms",
                    counted,
                    from,
                    (System.nanoTime() - start) / 1_000_000);
        }
        return counted;
    }

    /** @return the end of the newest hour that may be counted: the database's now less the grace */
    private Instant closedBefore(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + dialect.now() + " AS db_now");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return dialect.getInstant(rs, "db_now").minus(HistoryCounts.GRACE);
        }
    }

    /**
     * @param from the earliest {@code finished_at} to look at, or {@code null} for all
     * @return the earliest {@code finished_at} at or after it, or {@code null} if there is none
     */
    private Instant firstFinished(Connection c, Instant from) throws SQLException {
        Instant first = null;
        for (TaskStatus status : HistoryCounts.FINISHED) {
            try (PreparedStatement ps = c.prepareStatement("SELECT MIN(finished_at) AS first_at FROM dbtasks_task"
                    + " WHERE status = " + Dialect.status(status) + (from == null ? "" : " AND finished_at >= ?"))) {
                if (from != null) {
                    dialect.setInstant(ps, 1, from);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    Instant t = dialect.getInstant(rs, "first_at");
                    if (t != null && (first == null || t.isBefore(first))) {
                        first = t;
                    }
                }
            }
        }
        return first;
    }
}
