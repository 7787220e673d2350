package io.dbtasks.internal.completion;

import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The hourly counts of finished tasks ({@code dbtasks_history_count}, migration V27) and the hour
 * markers that say which hours are counted ({@code dbtasks_history_hour}): the bucketing of a
 * finished task into its hour, the counting of one closed hour, and the subtraction that keeps a
 * counted hour exact when a task finished in it is sent back to a live state or deleted.
 *
 * <p>The protocol. An hour's marker row is the lock that orders everything that changes the hour's
 * count: the rollup of an hour ({@link #countHour}) creates the marker if it is missing, locks it,
 * counts the hour's finished rows and sets {@code counted_at}, all in one transaction; a
 * transaction that takes a task out of a finished state (retry, revival, deletion, retention) locks
 * the task row first, then creates and locks the marker of the task's hour ({@link #subtract}),
 * and subtracts only if the hour is already counted. Whichever comes second sees the first's
 * commit: a rollup that waited for the marker counts the changed row as it now is (READ COMMITTED:
 * its count statement starts after the lock), an action that waited subtracts what the rollup
 * counted. Creating the marker is what makes the action wait for a rollup whose marker insert is
 * not yet committed (an absent row locks nothing); writing it, not only reading it with a lock, is
 * what makes two of them on different Galera nodes conflict. Lock order is task rows, then markers
 * in hour order; the rollup locks no task row.
 *
 * <p>The hot path writes nothing here: a task that finishes lands in the current hour, which is
 * counted only once it has closed and {@link #GRACE} has passed, so a settle that began inside the
 * hour has committed by then.
 *
 * <p>Thread-safe: no state besides the dialect.
 */
public final class HistoryCounts {
    /** The length of a counted period. */
    public static final Duration HOUR = Duration.ofHours(1);

    /**
     * How long after an hour's end it is counted: longer than any settle transaction stays open, so
     * no task finished in the hour commits after it was counted.
     */
    public static final Duration GRACE = Duration.ofMinutes(5);

    /** The finished states, whose rows are counted per hour. */
    public static final List<TaskStatus> FINISHED =
            List.of(TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.CANCELLED);

    private final Dialect dialect;

    /** @param dialect the database's dialect, for timestamps and its insert-if-absent */
    public HistoryCounts(Dialect dialect) {
        this.dialect = dialect;
    }

    /**
     * The hour a task finished in: {@code finished_at} truncated to the hour in UTC. The rollup
     * counts the rows of {@code [hour, hour + 1h)}, and every subtraction finds its row by this
     * value, so both bucket alike.
     *
     * @param finishedAt a task's {@code finished_at}
     * @return the start of its hour
     */
    public static Instant hourOf(Instant finishedAt) {
        return finishedAt.truncatedTo(ChronoUnit.HOURS);
    }

    /** One count row's key: an hour, a queue and a finished state. */
    public record Key(Instant hour, String queue, TaskStatus status) implements Comparable<Key> {
        @Override
        public int compareTo(Key o) {
            int c = hour.compareTo(o.hour);
            if (c == 0) {
                c = queue.compareTo(o.queue);
            }
            return c != 0 ? c : status.compareTo(o.status);
        }
    }

    /**
     * Collects finished rows that a transaction removes from history.
     *
     * @param removed where the counts go
     * @param queue the row's queue
     * @param status the row's state before the change; ignored unless finished
     * @param finishedAt the row's {@code finished_at}; ignored if {@code null}
     */
    public static void add(Map<Key, Long> removed, String queue, TaskStatus status, Instant finishedAt) {
        if (status.isFinal() && finishedAt != null) {
            removed.merge(new Key(hourOf(finishedAt), queue, status), 1L, Long::sum);
        }
    }

    /**
     * Takes finished rows out of the counts of their hours, in {@code c}'s transaction, which has
     * locked (or deleted) those rows: locks each hour's marker in hour order, creating the ones
     * missing, and subtracts from the hours already counted; a count that reaches 0 is deleted. The
     * rows of hours not yet counted need nothing: the rollup will count them as they are.
     *
     * @param c the transaction that removes the rows
     * @param removed how many rows of each (hour, queue, state) it removes; may be empty
     * @throws SQLException if the database fails
     */
    public void subtract(Connection c, Map<Key, Long> removed) throws SQLException {
        if (removed.isEmpty()) {
            return;
        }
        Set<Instant> hours = new TreeSet<>();
        removed.keySet().forEach(k -> hours.add(k.hour()));
        Set<Instant> counted = new HashSet<>();
        for (Instant hour : hours) {
            if (lockHour(c, hour)) {
                counted.add(hour);
            }
        }
        if (counted.isEmpty()) {
            return;
        }
        try (PreparedStatement less = c.prepareStatement("UPDATE dbtasks_history_count SET n = n - ?"
                        + " WHERE hour_start = ? AND queue = ? AND status = ?");
                PreparedStatement gone = c.prepareStatement("DELETE FROM dbtasks_history_count"
                        + " WHERE hour_start = ? AND queue = ? AND status = ? AND n <= 0")) {
            for (Map.Entry<Key, Long> e : new TreeMap<>(removed).entrySet()) {
                Key k = e.getKey();
                if (!counted.contains(k.hour())) {
                    continue;
                }
                less.setLong(1, e.getValue());
                dialect.setInstant(less, 2, k.hour());
                less.setString(3, k.queue());
                less.setString(4, k.status().name());
                // 0 rows only if the row's finished_at was rewritten outside the engine after the
                // hour was counted: there is then nothing of it to subtract.
                int rows = less.executeUpdate();
                if (rows > 1) {
                    throw new IllegalStateException("a history count key matched " + rows + " rows");
                }
                dialect.setInstant(gone, 1, k.hour());
                gone.setString(2, k.queue());
                gone.setString(3, k.status().name());
                gone.executeUpdate();
            }
        }
    }

    /**
     * Creates {@code hour}'s marker if it is missing (not counted) and locks it until {@code c}'s
     * transaction ends, by writing it ({@code changes + 1}): a write, not only a locking read, so
     * that on Galera two such transactions on different nodes conflict at certification as they
     * wait for each other on one node. An existing marker is updated first: on MariaDB an INSERT
     * that finds the key takes a shared lock, and two transactions upgrading theirs deadlock; only
     * a marker not there yet is inserted (the new row is the inserter's alone).
     *
     * @return whether the hour is counted
     */
    private boolean lockHour(Connection c, Instant hour) throws SQLException {
        if (!touch(c, hour)) {
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO dbtasks_history_hour (hour_start, counted_at, changes) VALUES (?, NULL, 0)"
                            + dialect.onConflictDoNothing())) {
                dialect.setInstant(ps, 1, hour);
                if (dialect.insertIfAbsent(ps)) {
                    return false;
                }
            }
            if (!touch(c, hour)) {
                throw new IllegalStateException("the marker of hour " + hour + " vanished");
            }
        }
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT counted_at FROM dbtasks_history_hour WHERE hour_start = ?" + dialect.forUpdate())) {
            dialect.setInstant(ps, 1, hour);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return dialect.getInstant(rs, "counted_at") != null;
            }
        }
    }

    /** @return whether {@code hour}'s marker exists; if so it is written and locked */
    private boolean touch(Connection c, Instant hour) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("UPDATE dbtasks_history_hour SET changes = changes + 1 WHERE hour_start = ?")) {
            dialect.setInstant(ps, 1, hour);
            int rows = ps.executeUpdate();
            if (rows > 1) {
                throw new IllegalStateException("the marker of hour " + hour + " is " + rows + " rows");
            }
            return rows == 1;
        }
    }

    /**
     * Counts the finished rows of {@code [hour, hour + 1h)} per queue and state into {@code
     * dbtasks_history_count} and marks the hour counted, in {@code c}'s transaction (READ COMMITTED,
     * begun by the caller). Each state's rows are one range of the finished-task index (status,
     * finished_at). Nothing happens if the hour is counted already.
     *
     * @param c a transaction with nothing else in it
     * @param hour the start of a closed hour
     * @return whether this call counted it
     * @throws SQLException if the database fails
     */
    public boolean countHour(Connection c, Instant hour) throws SQLException {
        if (lockHour(c, hour)) {
            return false;
        }
        Instant end = hour.plus(HOUR);
        List<Object[]> counts = new ArrayList<>();
        for (TaskStatus status : FINISHED) {
            // The state inlined (an enum constant, not input), so PostgreSQL matches the partial index.
            try (PreparedStatement ps = c.prepareStatement("SELECT queue, COUNT(*) FROM dbtasks_task WHERE status = "
                    + Dialect.status(status) + " AND finished_at >= ? AND finished_at < ? GROUP BY queue")) {
                dialect.setInstant(ps, 1, hour);
                dialect.setInstant(ps, 2, end);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        counts.add(new Object[] {rs.getString(1), status, rs.getLong(2)});
                    }
                }
            }
        }
        if (!counts.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO dbtasks_history_count (hour_start, queue, status, n) VALUES (?, ?, ?, ?)")) {
                for (Object[] row : counts) {
                    dialect.setInstant(ps, 1, hour);
                    ps.setString(2, (String) row[0]);
                    ps.setString(3, ((TaskStatus) row[1]).name());
                    ps.setLong(4, (Long) row[2]);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        }
        try (PreparedStatement ps = c.prepareStatement(
                "UPDATE dbtasks_history_hour SET counted_at = " + dialect.now() + " WHERE hour_start = ?")) {
            dialect.setInstant(ps, 1, hour);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("the marker of hour " + hour + " is not one row");
            }
        }
        return true;
    }

    /**
     * The end of the counted history: every finished row before it is in {@code
     * dbtasks_history_count}, every one at or after it is not. The rollup counts hours in order, so
     * the counted hours are all the non-empty hours before the newest one.
     *
     * @param c a connection
     * @return the end of the newest counted hour, or {@code null} if none is counted
     * @throws SQLException if the database fails
     */
    public Instant countedUpTo(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                        "SELECT MAX(hour_start) AS last_hour FROM dbtasks_history_hour WHERE counted_at IS NOT NULL");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            Instant last = dialect.getInstant(rs, "last_hour");
            return last == null ? null : last.plus(HOUR);
        }
    }
}
