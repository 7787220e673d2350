package io.dbtasks.internal.maintenance;

import io.dbtasks.DbTasksException;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.completion.HistoryCounts;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The day partitions of history, where the dialect partitions it ({@link
 * Dialect#partitionsHistory()}): made ahead of the days they will hold, and dropped whole once
 * every task in them is older than the longest retention of any finished state in any queue
 * (per-queue ages included).
 *
 * <p>Ahead: each run makes the partitions of yesterday to {@value #DAYS_AHEAD} days ahead, by the
 * database clock, that are missing, so a settle always finds its day's partition while any engine has
 * run within the last week. Dropping: a day goes when its end is older than the retention, and
 * only if no workflow has a step in it (a workflow's rows leave together: {@link
 * TaskRetention#deleteWorkflows} deletes a whole workflow once all of it is old, and a day holding a
 * step of a workflow still kept waits for it; likewise a day holding a chunk task of a batch
 * that {@link TaskRetention#deleteBatches} has not deleted whole yet). A drop deletes the day's counted hours ({@code
 * dbtasks_history_count}) and the idempotency keys of its tasks in the same transaction where the
 * database allows DDL in one (PostgreSQL).
 *
 * <p>Thread-safe; runs are serialized by the retention lock, except {@link #ensure}, which any
 * engine may run at once (a partition made by another engine in between fails that run, and the
 * next one finds it).
 */
public final class HistoryPartitions {
    /** How many days ahead of today the partitions are made. */
    public static final int DAYS_AHEAD = 7;

    /** How often a started engine makes the partitions ahead. */
    public static final Duration INTERVAL = Duration.ofHours(1);

    private static final Logger log = LoggerFactory.getLogger(HistoryPartitions.class);
    private static final long DAY_SECONDS = 86_400;

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final HistoryCounts counts;

    /**
     * @param jdbc connections
     * @param dialect the database's dialect
     */
    public HistoryPartitions(Jdbc jdbc, Dialect dialect) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.counts = new HistoryCounts(dialect);
    }

    /** Makes the partitions ahead; failures are logged and retried at the next run. */
    public void run() {
        try {
            ensure();
        } catch (DbTasksException e) {
            log.warn("Making the day partitions of history failed; it runs again in {}", INTERVAL, e);
        }
    }

    /**
     * Makes the missing partitions of yesterday to {@value #DAYS_AHEAD} days ahead.
     *
     * @return how many days got partitions; 0 where history is not partitioned
     * @throws DbTasksException if the database fails
     */
    public int ensure() {
        if (!dialect.partitionsHistory()) {
            return 0;
        }
        return jdbc.withConnection("Make the day partitions of history", c -> {
            int today = day(c, 0);
            return dialect.createHistoryDays(c, today - 1, today + DAYS_AHEAD);
        });
    }

    /**
     * Drops the partitions whose every day ended more than {@code age} ago, oldest first; one with a
     * workflow's step or a batch's chunk task stays. The partition of the rows from before partitioning goes once its newest
     * row is older than {@code age}.
     *
     * @param age the longest retention of a finished state in any queue, positive
     * @return the finished tasks dropped with their partitions
     * @throws DbTasksException if the database fails; partitions dropped before stay dropped
     */
    public long dropOlderThan(Duration age) {
        if (!dialect.partitionsHistory()) {
            return 0;
        }
        int cutoff = jdbc.withConnection("Find the days of history to drop", c -> day(c, age.toMillis()));
        List<Dialect.HistoryPartition> partitions =
                jdbc.withConnection("List the partitions of history", dialect::historyPartitions);
        Instant firstDay = partitions.stream()
                .filter(p -> p.fromDay() >= 0)
                .findFirst()
                .map(p -> start(p.fromDay()))
                .orElse(null);
        long dropped = 0;
        for (Dialect.HistoryPartition partition : partitions) {
            if (partition.toDay() > cutoff) {
                break;
            }
            dropped += Jdbc.retryingDeadlocks(
                    () -> jdbc.withConnection("Drop a partition of history", c -> drop(c, partition, firstDay, age)));
        }
        return dropped;
    }

    /** @return the tasks dropped, 0 if the partition stays */
    private long drop(Connection c, Dialect.HistoryPartition partition, Instant firstDay, Duration age)
            throws SQLException {
        String in = " FROM dbtasks_task WHERE history_day >= ? AND history_day < ?";
        int from = partition.fromDay();
        int to = partition.toDay();
        if (exists(c, "SELECT 1" + in + " AND workflow_id IS NOT NULL", from, to)) {
            log.info(
                    "History partition {} is kept: it holds steps of a workflow that is not old yet", partition.name());
            return 0;
        }
        // From the chunk rows, which are few beside a day of history: each looks its task up by the
        // primary key (id, history_day) in the day's partition.
        if (exists(
                c,
                "SELECT 1 FROM dbtasks_batch_chunk ch WHERE EXISTS (SELECT 1 FROM dbtasks_task t"
                        + " WHERE t.id = ch.task_id AND t.history_day >= ? AND t.history_day < ?)",
                from,
                to)) {
            log.info(
                    "History partition {} is kept: it holds chunk tasks of a batch that is not old yet",
                    partition.name());
            return 0;
        }
        Instant hoursFrom = start(from);
        Instant hoursTo = start(to);
        if (from < 0) {
            // Rows from before partitioning finished at any time: they go once the newest is old.
            if (exists(
                    c, "SELECT 1" + in + " AND finished_at >= " + dialect.nowPlusMillis(), from, to, -age.toMillis())) {
                return 0;
            }
            hoursFrom = Instant.EPOCH;
            // Without day partitions the rows from before are all of history: every counted hour goes.
            hoursTo = firstDay != null ? firstDay : Instant.now().plus(Duration.ofDays(1));
        }
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            long tasks;
            try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*)" + in)) {
                ps.setInt(1, from);
                ps.setInt(2, to);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    tasks = rs.getLong(1);
                }
            }
            if (hoursTo != null) {
                try (PreparedStatement ps = c.prepareStatement(
                        "DELETE FROM dbtasks_history_count WHERE hour_start >= ? AND hour_start < ?")) {
                    dialect.setInstant(ps, 1, hoursFrom);
                    dialect.setInstant(ps, 2, hoursTo);
                    ps.executeUpdate();
                }
            }
            if (from < 0 && hoursTo != null) {
                // Rows from before partitioning that finished on or after the first day partition's
                // start share their hours with that day's rows: subtract them, as a row-by-row delete does.
                Map<HistoryCounts.Key, Long> removed = new HashMap<>();
                try (PreparedStatement ps =
                        c.prepareStatement("SELECT queue, status, finished_at" + in + " AND finished_at >= ?")) {
                    ps.setInt(1, from);
                    ps.setInt(2, to);
                    dialect.setInstant(ps, 3, hoursTo);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            HistoryCounts.add(
                                    removed,
                                    rs.getString(1),
                                    TaskStatus.valueOf(rs.getString(2)),
                                    dialect.getInstant(rs, "finished_at"));
                        }
                    }
                }
                counts.subtract(c, removed);
            }
            long keys = dialect.dropHistoryPartition(c, partition);
            c.commit();
            log.info(
                    "Dropped history partition {}: {} finished task(s), {} idempotency key(s)",
                    partition.name(),
                    tasks,
                    keys);
            return tasks;
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(auto);
        }
    }

    private static Instant start(int day) {
        return Instant.ofEpochSecond(day * DAY_SECONDS);
    }

    private static String dayText(int day) {
        return day < 0
                ? "before partitioning"
                : java.time.LocalDate.ofEpochDay(day).toString();
    }

    private boolean exists(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql + " LIMIT 1")) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** @return the history day of the database's now minus {@code agoMillis} */
    private int day(Connection c, long agoMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + dialect.historyDay(dialect.nowPlusMillis()))) {
            ps.setLong(1, -agoMillis);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
