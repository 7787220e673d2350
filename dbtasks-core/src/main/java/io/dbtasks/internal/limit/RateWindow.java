package io.dbtasks.internal.limit;

import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.limit.Limit;
import io.dbtasks.limit.Rate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The rate decision of a claim within limits: how many starts each rate-limited key may make now,
 * from the sliding log of its starts ({@code dbtasks_rate_start}); see {@link Rate} for the
 * guarantee and why a log.
 *
 * <p>The protocol, inside the claim's transaction and under each key's lock (its row, or on
 * PostgreSQL an advisory lock; every claim that starts a task of the key holds it until it commits):
 *
 * <ol>
 *   <li>{@link #room}: delete the key's starts older than the window by the database clock, count
 *       the rest, and allow {@code starts} minus that count. Every start still counted is at most one
 *       window before any start this claim makes (the claim's start times are read later, from the
 *       same clock), so the count covers every window the new starts fall in.
 *   <li>{@link #record}: after the claim's update, insert one row per claimed task of such a key with
 *       the task's own {@code started_at}, so the log holds exactly the recorded start times and
 *       commits or rolls back with the claim.
 * </ol>
 *
 * <p>Why this holds in any window of length P: take the last start inserted among those in the
 * window. When its claim counted, every other start in the window was already in the log (inserted
 * before, under the same lock) and younger than one window before its own start, so it was counted;
 * the claim started only what left the count at most {@code starts}.
 *
 * <p>An engine also remembers, per key, when the window of a key it found full frees (database time
 * turned into this JVM's clock), so that its claims leave the key out of the candidates until then
 * (other keys are not held back by it) and its claim loop comes back for it then rather than at
 * the next poll: ahead by the usual time from a claim's beginning to its count, so that the count
 * comes just after the window frees, not a claim's duration later (with a backlog, that delay would
 * be lost from every window). The memory is a hint: the count under the lock decides, a claim that
 * came too early comes back at the time itself, and a changed rate drops the hint.
 *
 * <p>A queue-wide rate ({@link io.dbtasks.limit.Limits#setQueueRate}) keeps its log in the same
 * table under the reserved key {@value #QUEUE_KEY}, which no concurrency key can contain, and follows
 * the same protocol under the lock of the queue's row in {@code dbtasks_queue_rate} ({@link
 * #queueRoom}, {@link #recordQueue}): the argument above holds with that lock for the key's, and
 * every start of the queue, with a key or without, is logged. The claim takes that lock before any
 * key's, so claims never wait for each other in a cycle. The hint is kept per queue as well ({@link
 * #queueHeld}): an engine that found the window full does not claim from the queue until it frees.
 *
 * <p>Thread-safe.
 */
public final class RateWindow {
    private final Dialect dialect;

    /** The longest lead a claim is sent ahead of a window freeing by. */
    static final long MAX_LEAD_NANOS = 250_000_000L;

    /**
     * @param rate the rate the key was found at
     * @param wakeAtNanos when this engine comes back for the key (this JVM's clock): when its window
     *     frees a start, less the usual time from a claim's beginning to its count
     */
    private record Hint(Rate rate, long wakeAtNanos) {}

    /**
     * How long claims take from their beginning to the count of the starts, on average: a claim that
     * begins that long before a window frees counts just after it does, so that a key with a backlog
     * starts its next task about when its window allows, not a claim's duration later.
     */
    private volatile long leadNanos;

    /** By queue, then key: when a key this engine found at its rate frees a start. */
    private final Map<String, Map<String, Hint>> hints = new ConcurrentHashMap<>();

    /** By queue: when a queue this engine found at its queue-wide rate frees a start. */
    private final Map<String, Hint> queueHints = new ConcurrentHashMap<>();

    /**
     * The key under which the log holds the starts of a queue with a queue-wide rate: no concurrency
     * key can contain {@code *} ({@link io.dbtasks.TaskRequest}), so no key's log is mixed with it.
     */
    public static final String QUEUE_KEY = "*";

    /** @param dialect the database's dialect */
    public RateWindow(Dialect dialect) {
        this.dialect = dialect;
    }

    /**
     * @param queue a queue
     * @param limits its limits now
     * @return the keys this engine found at their rate, whose window has not freed a start yet by
     *     this JVM's clock and whose rate has not changed since
     */
    public Set<String> heldKeys(String queue, LimitSet limits) {
        Map<String, Hint> ofQueue = hints.get(queue);
        if (ofQueue == null || ofQueue.isEmpty()) {
            return Set.of();
        }
        long now = System.nanoTime();
        Set<String> held = new HashSet<>();
        ofQueue.entrySet().removeIf(e -> {
            Rate rate = limits.forKey(e.getKey()).map(Limit::rate).orElse(null);
            if (now - e.getValue().wakeAtNanos() >= 0 || !e.getValue().rate().equals(rate)) {
                return true;
            }
            held.add(e.getKey());
            return false;
        });
        return held;
    }

    /**
     * @param queue a queue
     * @return milliseconds (at least 1) until the first key of the queue this engine found at its
     *     rate frees a start, or {@link Long#MAX_VALUE} if it knows of none
     */
    public long millisUntilFree(String queue) {
        Map<String, Hint> ofQueue = hints.get(queue);
        Hint whole = queueHints.get(queue);
        if ((ofQueue == null || ofQueue.isEmpty()) && whole == null) {
            return Long.MAX_VALUE;
        }
        long now = System.nanoTime();
        long first = Long.MAX_VALUE;
        if (ofQueue != null) {
            for (Hint h : ofQueue.values()) {
                first = Math.min(first, h.wakeAtNanos() - now);
            }
        }
        if (whole != null) {
            // The queue's window bounds every key: the claim comes back when it frees, not before.
            first = whole.wakeAtNanos() - now;
        }
        return first == Long.MAX_VALUE ? first : Math.max(1, (first + 999_999) / 1_000_000);
    }

    /**
     * How many starts each rate-limited key among {@code keys} may make now; prunes their logs. Call
     * with the keys' locks held, in the claim's transaction.
     *
     * @param keys keys whose lock this transaction holds
     * @param began when the claim began ({@link System#nanoTime()})
     * @return by key, for those of {@code keys} whose limit has a rate only: the starts left in the
     *     window (0 or more)
     */
    public Map<String, Integer> room(Connection c, String queue, Collection<String> keys, LimitSet limits, long began)
            throws SQLException {
        Map<String, Rate> rated = rated(keys, limits);
        if (rated.isEmpty()) {
            return Map.of();
        }
        long lead = Math.min(MAX_LEAD_NANOS, Math.max(0, System.nanoTime() - began));
        leadNanos = (leadNanos * 4 + lead) / 5;
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_rate_start WHERE queue = ?"
                + " AND concurrency_key = ? AND started_at <= " + dialect.nowPlusMillis())) {
            for (Map.Entry<String, Rate> e : rated.entrySet()) {
                ps.setString(1, queue);
                ps.setString(2, e.getKey());
                ps.setLong(3, -e.getValue().periodMillis());
                ps.addBatch();
            }
            ps.executeBatch();
        }
        // Every row left is younger than one window before this claim's starts: all count.
        Map<String, Integer> room = new HashMap<>();
        Map<String, Instant> oldest = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT concurrency_key, COUNT(*), MIN(started_at) AS oldest"
                + " FROM dbtasks_rate_start WHERE queue = ? AND concurrency_key IN (" + marks(rated.size()) + ")"
                + " GROUP BY concurrency_key")) {
            int i = 1;
            ps.setString(i++, queue);
            for (String k : rated.keySet()) {
                ps.setString(i++, k);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String key = rs.getString(1);
                    long used = rs.getLong(2);
                    int left = (int) Math.max(0, rated.get(key).starts() - used);
                    room.put(key, left);
                    if (left == 0) {
                        oldest.put(key, dialect.getInstant(rs, "oldest"));
                    }
                }
            }
        }
        rated.keySet().forEach(k -> room.putIfAbsent(k, rated.get(k).starts()));
        Map<String, Hint> ofQueue = hints.computeIfAbsent(queue, q -> new ConcurrentHashMap<>());
        rated.keySet().forEach(k -> {
            if (!oldest.containsKey(k)) {
                ofQueue.remove(k);
            }
        });
        if (!oldest.isEmpty()) {
            Instant now = now(c);
            long nanos = System.nanoTime();
            oldest.forEach((key, first) -> {
                Rate rate = rated.get(key);
                // The oldest start leaves the window one period after it; with more starts than the rate
                // allows (it was lowered) that is early, and the claim then finds the key full again.
                long until = Math.max(
                        0,
                        java.time.Duration.between(now, first.plus(rate.period()))
                                .toNanos());
                // Sent ahead by the usual lead, unless this claim itself came that early: then at the time.
                long ahead = leadNanos;
                ofQueue.put(key, new Hint(rate, nanos + (until > ahead ? until - ahead : until)));
            });
        }
        return room;
    }

    /**
     * @param queue a queue
     * @param rate its queue-wide rate now ({@link LimitSet#queueRate()}), or {@code null}
     * @return whether this engine found the queue's window full and it has not freed a start yet by
     *     this JVM's clock, its rate unchanged: a claim now would start nothing
     */
    public boolean queueHeld(String queue, Rate rate) {
        Hint h = queueHints.get(queue);
        if (h == null) {
            return false;
        }
        if (System.nanoTime() - h.wakeAtNanos() >= 0 || !h.rate().equals(rate)) {
            queueHints.remove(queue, h);
            return false;
        }
        return true;
    }

    /**
     * Locks the row of {@code queue}'s queue-wide rate, waiting for a claim that holds it (the lock
     * ends with the claim's transaction), prunes the queue's log and tells how many starts its window
     * leaves. Call first in the claim's transaction, before any key's lock.
     *
     * @param began when the claim began ({@link System#nanoTime()})
     * @return the rate read from the locked row with the starts its window leaves (0 or more), or
     *     {@code null} if the queue has no queue-wide rate any more (it was removed)
     */
    public QueueRoom queueRoom(Connection c, String queue, long began) throws SQLException {
        Rate rate;
        try (PreparedStatement ps = c.prepareStatement("SELECT rate_starts, rate_period_ms FROM dbtasks_queue_rate"
                + " WHERE queue = ?" + dialect.forUpdate())) {
            ps.setString(1, queue);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    queueHints.remove(queue);
                    return null;
                }
                rate = new Rate(rs.getInt(1), java.time.Duration.ofMillis(rs.getLong(2)));
            }
        }
        long lead = Math.min(MAX_LEAD_NANOS, Math.max(0, System.nanoTime() - began));
        leadNanos = (leadNanos * 4 + lead) / 5;
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_rate_start WHERE queue = ?"
                + " AND concurrency_key = ? AND started_at <= " + dialect.nowPlusMillis())) {
            ps.setString(1, queue);
            ps.setString(2, QUEUE_KEY);
            ps.setLong(3, -rate.periodMillis());
            ps.executeUpdate();
        }
        // Every row left is younger than one window before this claim's starts: all count.
        int left = queueWindow(c, queue, rate);
        return new QueueRoom(rate, left);
    }

    /**
     * Counts the queue's logged starts in the window and, if they fill it, remembers when the oldest
     * leaves it ({@link #queueHeld}); else forgets any such time. Call with the queue's row locked.
     *
     * @return the starts the window leaves, 0 or more
     */
    private int queueWindow(Connection c, String queue, Rate rate) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*), MIN(started_at) AS oldest," + " "
                + dialect.now() + " AS at FROM dbtasks_rate_start WHERE queue = ? AND concurrency_key = ?")) {
            ps.setString(1, queue);
            ps.setString(2, QUEUE_KEY);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                int left = (int) Math.max(0, rate.starts() - rs.getLong(1));
                if (left > 0) {
                    queueHints.remove(queue);
                    return left;
                }
                Instant oldest = dialect.getInstant(rs, "oldest");
                Instant now = dialect.getInstant(rs, "at");
                // The oldest start leaves the window one period after it (early, if the rate was lowered:
                // the claim then finds the window full again and comes back later).
                long until = Math.max(
                        0,
                        java.time.Duration.between(now, oldest.plus(rate.period()))
                                .toNanos());
                long ahead = leadNanos;
                queueHints.put(queue, new Hint(rate, System.nanoTime() + (until > ahead ? until - ahead : until)));
                return 0;
            }
        }
    }

    /**
     * After a claim that took every start its queue's window left: remembers when the window frees
     * its next start, so that this engine's claim loop comes back then rather than at its next poll.
     * Call with the queue's row locked, after {@link #recordQueue}.
     *
     * @param rate the rate the claim counted with
     */
    public void queueFilled(Connection c, String queue, Rate rate) throws SQLException {
        queueWindow(c, queue, rate);
    }

    /**
     * The queue-wide rate in force for one claim, and what its window left.
     *
     * @param rate the rate read from the queue's locked row
     * @param left the starts the window leaves, 0 or more
     */
    public record QueueRoom(Rate rate, int left) {}

    /**
     * Logs the starts of the tasks just claimed in this transaction in the log of the queue's
     * queue-wide rate, whatever their keys. Call with the queue's row locked ({@link #queueRoom}).
     *
     * @param ids the claimed task ids
     * @param rate the rate the claim counted with
     */
    public void recordQueue(Connection c, String queue, Collection<Long> ids, Rate rate) throws SQLException {
        if (ids.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO dbtasks_rate_start"
                + " (queue, concurrency_key, started_at, task_id, expires_at)"
                + " SELECT queue, '" + QUEUE_KEY + "', started_at, id, " + dialect.nowPlusMillis()
                + " FROM dbtasks_task WHERE " + Dialect.LIVE + " AND id IN (" + marks(ids.size())
                + ") AND queue = ?")) {
            int i = 1;
            ps.setLong(i++, rate.periodMillis());
            for (Long id : ids) {
                ps.setLong(i++, id);
            }
            ps.setString(i, queue);
            int n = ps.executeUpdate();
            if (n != ids.size()) {
                throw new IllegalStateException("claim logged " + n + " queue starts of " + ids.size() + " tasks");
            }
        }
    }

    /**
     * Logs the starts of the tasks just claimed in this transaction whose key has a rate.
     *
     * @param claimed the claimed task ids with their keys ({@code null} for none)
     */
    public void record(Connection c, String queue, Map<Long, String> claimed, LimitSet limits) throws SQLException {
        Map<Long, List<Long>> byPeriod = new HashMap<>();
        claimed.forEach((id, key) -> {
            Rate rate = key == null ? null : limits.forKey(key).map(Limit::rate).orElse(null);
            if (rate != null) {
                byPeriod.computeIfAbsent(rate.periodMillis(), p -> new ArrayList<>())
                        .add(id);
            }
        });
        for (Map.Entry<Long, List<Long>> e : byPeriod.entrySet()) {
            List<Long> ids = e.getValue();
            // expires_at, from the clock after the claim's update, is no earlier than started_at plus
            // the window: the retention sweep deletes only starts no window counts.
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO dbtasks_rate_start"
                    + " (queue, concurrency_key, started_at, task_id, expires_at)"
                    + " SELECT queue, concurrency_key, started_at, id, " + dialect.nowPlusMillis()
                    + " FROM dbtasks_task WHERE " + Dialect.LIVE + " AND id IN (" + marks(ids.size())
                    + ") AND queue = ?")) {
                int i = 1;
                ps.setLong(i++, e.getKey());
                for (Long id : ids) {
                    ps.setLong(i++, id);
                }
                ps.setString(i, queue);
                int n = ps.executeUpdate();
                if (n != ids.size()) {
                    throw new IllegalStateException("claim logged " + n + " starts of " + ids.size() + " tasks");
                }
            }
        }
    }

    /**
     * @return how many starts of {@code key} the log holds in the window of {@code rate} ending now
     */
    static long startsInWindow(Connection c, Dialect dialect, String queue, String key, Rate rate) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM dbtasks_rate_start WHERE queue = ?"
                + " AND concurrency_key = ? AND started_at > " + dialect.nowPlusMillis())) {
            ps.setString(1, queue);
            ps.setString(2, key);
            ps.setLong(3, -rate.periodMillis());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private Instant now(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + dialect.now() + " AS at");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return dialect.getInstant(rs, "at");
        }
    }

    private static Map<String, Rate> rated(Collection<String> keys, LimitSet limits) {
        Map<String, Rate> rated = new java.util.TreeMap<>();
        for (String k : keys) {
            limits.forKey(k).map(Limit::rate).ifPresent(r -> rated.put(k, r));
        }
        return rated;
    }

    private static String marks(int n) {
        return String.join(", ", Collections.nCopies(n, "?"));
    }
}
