package io.dbtasks.internal.limit;

import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.limit.KeyLoad;
import io.dbtasks.limit.Limit;
import io.dbtasks.limit.Limits;
import io.dbtasks.limit.Rate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The limit rows ({@code dbtasks_limit}) and this engine's copy of them.
 *
 * <p>The claim loops ask {@link #forQueue} before every claim. The first ask reads the table and
 * fails if it cannot (so that the claim fails and is retried, never made as if the queue had no
 * limits). Later answers come from the last snapshot read; a snapshot older than {@link
 * Limits#REFRESH_MILLIS} is re-read in the background, off the claim's path, and at once after a
 * change made through this instance. A re-read that fails keeps the last good snapshot: the claim
 * then fails on its own if the database is gone.
 *
 * <p>Thread-safe.
 */
public final class JdbcLimits implements Limits {
    private static final String COLUMNS = "queue, key_pattern, max_running, fifo, rate_starts, rate_period_ms";

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final long refreshNanos = REFRESH_MILLIS * 1_000_000L;
    /** The last good read, or null before the first read succeeded. */
    private volatile Map<String, LimitSet> snapshot;

    private volatile long readAt;
    private final AtomicBoolean refreshing = new AtomicBoolean();

    /**
     * @param jdbc the engine's connections
     * @param dialect the database's dialect
     */
    public JdbcLimits(Jdbc jdbc, Dialect dialect) {
        this.jdbc = jdbc;
        this.dialect = dialect;
    }

    /**
     * @param queue a queue
     * @return its limits as of about {@link Limits#REFRESH_MILLIS} ms ago at most (plus one read)
     * @throws io.dbtasks.DbTasksException if no read of the limit rows has succeeded yet and this one
     *     fails
     */
    public LimitSet forQueue(String queue) {
        Map<String, LimitSet> current = snapshot;
        if (current == null) {
            synchronized (this) {
                if (snapshot == null) {
                    refresh();
                }
                current = snapshot;
            }
        } else if (System.nanoTime() - readAt > refreshNanos && refreshing.compareAndSet(false, true)) {
            CompletableFuture.runAsync(() -> {
                try {
                    refresh();
                } catch (RuntimeException e) {
                    readAt = System.nanoTime(); // keep the last good snapshot; retry after the interval
                } finally {
                    refreshing.set(false);
                }
            });
        }
        return current.getOrDefault(queue, LimitSet.NONE);
    }

    private synchronized List<Limit> refresh() {
        List<Limit> all = list();
        Map<String, List<Limit>> byQueue = new LinkedHashMap<>();
        for (Limit l : all) {
            byQueue.computeIfAbsent(l.queue(), q -> new ArrayList<>()).add(l);
        }
        Map<String, LimitSet> sets = new LinkedHashMap<>();
        Set<String> fair = new HashSet<>(fairQueues());
        Map<String, Rate> queueRates = queueRates();
        byQueue.forEach((q, ls) -> sets.put(q, new LimitSet(ls, fair.contains(q), queueRates.get(q))));
        fair.forEach(q -> sets.putIfAbsent(q, new LimitSet(List.of(), true, queueRates.get(q))));
        queueRates.forEach((q, r) -> sets.putIfAbsent(q, new LimitSet(List.of(), false, r)));
        snapshot = Map.copyOf(sets);
        readAt = System.nanoTime();
        return all;
    }

    @Override
    public void set(Limit limit) {
        Objects.requireNonNull(limit, "limit");
        jdbc.inTransaction("Set limit " + limit.queue() + " " + limit.keyPattern(), c -> {
            if (update(c, limit) == 0) {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO dbtasks_limit (" + COLUMNS
                        + ", updated_at) VALUES (?, ?, ?, ?, ?, ?, " + dialect.now() + ")"
                        + dialect.onConflictDoNothing())) {
                    ps.setString(1, limit.queue());
                    ps.setString(2, limit.keyPattern());
                    bindValues(ps, 3, limit);
                    if (!dialect.insertIfAbsent(ps)) {
                        update(c, limit); // set at the same moment elsewhere: this one is the latest
                    }
                }
            }
            return null;
        });
        refresh();
    }

    private int update(Connection c, Limit limit) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "UPDATE dbtasks_limit SET max_running = ?, fifo = ?, rate_starts = ?, rate_period_ms = ?,"
                        + " updated_at = " + dialect.now()
                        + " WHERE queue = ? AND key_pattern = ?")) {
            int i = bindValues(ps, 1, limit);
            ps.setString(i++, limit.queue());
            ps.setString(i, limit.keyPattern());
            return ps.executeUpdate();
        }
    }

    private static int bindValues(PreparedStatement ps, int index, Limit limit) throws SQLException {
        int i = index;
        ps.setInt(i++, limit.maxRunning());
        ps.setBoolean(i++, limit.fifo());
        Rate rate = limit.rate();
        if (rate == null) {
            ps.setNull(i++, java.sql.Types.INTEGER);
            ps.setNull(i++, java.sql.Types.BIGINT);
        } else {
            ps.setInt(i++, rate.starts());
            ps.setLong(i++, rate.periodMillis());
        }
        return i;
    }

    @Override
    public boolean remove(String queue, String keyPattern) {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(keyPattern, "keyPattern");
        int n = jdbc.withConnection("Remove limit " + queue + " " + keyPattern, c -> {
            try (PreparedStatement ps =
                    c.prepareStatement("DELETE FROM dbtasks_limit WHERE queue = ? AND key_pattern = ?")) {
                ps.setString(1, queue);
                ps.setString(2, keyPattern);
                return ps.executeUpdate();
            }
        });
        refresh();
        return n > 0;
    }

    @Override
    public void setFair(String queue, boolean fair) {
        Objects.requireNonNull(queue, "queue");
        if (queue.isBlank() || queue.length() > io.dbtasks.TaskRequest.MAX_NAME_LENGTH) {
            throw new IllegalArgumentException(
                    "queue must be 1 to " + io.dbtasks.TaskRequest.MAX_NAME_LENGTH + " characters and not blank");
        }
        jdbc.withConnection("Set fairness of queue " + queue, c -> {
            if (fair) {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO dbtasks_fair_queue (queue, updated_at)"
                        + " VALUES (?, " + dialect.now() + ")" + dialect.onConflictDoNothing())) {
                    ps.setString(1, queue);
                    dialect.insertIfAbsent(ps);
                }
            } else {
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_fair_queue WHERE queue = ?")) {
                    ps.setString(1, queue);
                    ps.executeUpdate();
                }
            }
            return null;
        });
        refresh();
    }

    @Override
    public void setQueueRate(String queue, Rate rate) {
        checkQueue(queue);
        Objects.requireNonNull(rate, "rate");
        jdbc.inTransaction("Set rate of queue " + queue, c -> {
            if (updateQueueRate(c, queue, rate) == 0) {
                try (PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO dbtasks_queue_rate (queue, rate_starts, rate_period_ms, updated_at)"
                                + " VALUES (?, ?, ?, " + dialect.now() + ")" + dialect.onConflictDoNothing())) {
                    ps.setString(1, queue);
                    ps.setInt(2, rate.starts());
                    ps.setLong(3, rate.periodMillis());
                    if (!dialect.insertIfAbsent(ps)) {
                        updateQueueRate(c, queue, rate); // set at the same moment elsewhere: this one is the latest
                    }
                }
            }
            return null;
        });
        refresh();
    }

    private int updateQueueRate(Connection c, String queue, Rate rate) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE dbtasks_queue_rate SET rate_starts = ?,"
                + " rate_period_ms = ?, updated_at = " + dialect.now() + " WHERE queue = ?")) {
            ps.setInt(1, rate.starts());
            ps.setLong(2, rate.periodMillis());
            ps.setString(3, queue);
            return ps.executeUpdate();
        }
    }

    @Override
    public boolean removeQueueRate(String queue) {
        Objects.requireNonNull(queue, "queue");
        int n = jdbc.withConnection("Remove rate of queue " + queue, c -> {
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_queue_rate WHERE queue = ?")) {
                ps.setString(1, queue);
                return ps.executeUpdate();
            }
        });
        refresh();
        return n > 0;
    }

    @Override
    public Optional<Rate> queueRate(String queue) {
        Objects.requireNonNull(queue, "queue");
        return jdbc.withConnection("Rate of queue " + queue, c -> {
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT rate_starts, rate_period_ms FROM dbtasks_queue_rate WHERE queue = ?")) {
                ps.setString(1, queue);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next()
                            ? Optional.of(new Rate(rs.getInt(1), Duration.ofMillis(rs.getLong(2))))
                            : Optional.<Rate>empty();
                }
            }
        });
    }

    @Override
    public Map<String, Rate> queueRates() {
        return jdbc.withConnection("List queue rates", c -> {
            Map<String, Rate> rates = new TreeMap<>();
            try (PreparedStatement ps = c.prepareStatement(
                            "SELECT queue, rate_starts, rate_period_ms FROM dbtasks_queue_rate ORDER BY queue");
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rates.put(rs.getString(1), new Rate(rs.getInt(2), Duration.ofMillis(rs.getLong(3))));
                }
            }
            return java.util.Collections.unmodifiableMap(rates);
        });
    }

    private static void checkQueue(String queue) {
        Objects.requireNonNull(queue, "queue");
        if (queue.isBlank() || queue.length() > io.dbtasks.TaskRequest.MAX_NAME_LENGTH) {
            throw new IllegalArgumentException(
                    "queue must be 1 to " + io.dbtasks.TaskRequest.MAX_NAME_LENGTH + " characters and not blank");
        }
    }

    @Override
    public List<String> fairQueues() {
        return jdbc.withConnection("List fair queues", c -> {
            List<String> queues = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT queue FROM dbtasks_fair_queue ORDER BY queue");
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    queues.add(rs.getString(1));
                }
            }
            return queues;
        });
    }

    @Override
    public List<Limit> list() {
        return jdbc.withConnection("List limits", c -> {
            List<Limit> limits = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(
                            "SELECT " + COLUMNS + " FROM dbtasks_limit ORDER BY queue, key_pattern");
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    int starts = rs.getInt("rate_starts");
                    Rate rate = rs.wasNull() ? null : new Rate(starts, Duration.ofMillis(rs.getLong("rate_period_ms")));
                    limits.add(new Limit(
                            rs.getString("queue"),
                            rs.getString("key_pattern"),
                            rs.getInt("max_running"),
                            rs.getBoolean("fifo"),
                            rate));
                }
            }
            return limits;
        });
    }

    @Override
    public Optional<Limit> limitFor(String queue, String key) {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(key, "key");
        List<Limit> ofQueue =
                refresh().stream().filter(l -> l.queue().equals(queue)).toList();
        return new LimitSet(ofQueue, false).forKey(key);
    }

    @Override
    public List<KeyLoad> load(String queue) {
        Objects.requireNonNull(queue, "queue");
        LimitSet limits = new LimitSet(
                refresh().stream().filter(l -> l.queue().equals(queue)).toList(), false);
        return jdbc.withConnection("Load of the keys of queue " + queue, c -> {
            Map<String, long[]> counts = new TreeMap<>();
            // Each state read apart, through an index that holds it (see Dialect.liveOfKeys).
            String ofState = "SELECT concurrency_key, status, COUNT(*) FROM dbtasks_task WHERE queue = ? AND "
                    + Dialect.LIVE + " AND concurrency_key IS NOT NULL AND status = ";
            try (PreparedStatement ps = c.prepareStatement(ofState + Dialect.status(TaskStatus.PENDING)
                    + " GROUP BY concurrency_key, status UNION ALL " + ofState
                    + Dialect.status(TaskStatus.RUNNING) + " GROUP BY concurrency_key, status")) {
                ps.setString(1, queue);
                ps.setString(2, queue);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        long[] n = counts.computeIfAbsent(rs.getString(1), k -> new long[2]);
                        n[TaskStatus.RUNNING.name().equals(rs.getString(2)) ? 0 : 1] += rs.getLong(3);
                    }
                }
            }
            List<KeyLoad> loads = new ArrayList<>(counts.size());
            counts.forEach((key, n) -> loads.add(
                    new KeyLoad(queue, key, n[0], n[1], limits.forKey(key).orElse(null))));
            return loads;
        });
    }

    @Override
    public Optional<String> waitReason(long taskId) {
        return jdbc.withConnection("Wait reason of task " + taskId, c -> {
            String queue;
            String key;
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT queue, concurrency_key FROM dbtasks_task WHERE id = ? AND "
                            + Dialect.LIVE + " AND status = " + Dialect.status(TaskStatus.PENDING) + " AND run_at <= "
                            + dialect.now())) {
                // A task not due yet (scheduled, or backing off before a retry) waits for its time.
                ps.setLong(1, taskId);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return Optional.<String>empty();
                    }
                    queue = rs.getString(1);
                    key = rs.getString(2);
                }
            }
            Optional<String> byKey = key == null ? Optional.<String>empty() : keyReason(c, taskId, queue, key);
            if (byKey.isPresent()) {
                return byKey;
            }
            Rate queueRate = forQueue(queue).queueRate();
            if (queueRate != null
                    && RateWindow.startsInWindow(c, dialect, queue, RateWindow.QUEUE_KEY, queueRate)
                            >= queueRate.starts()) {
                return Optional.of("waiting for rate limit of queue " + queue + ": " + queueRate);
            }
            return Optional.<String>empty();
        });
    }

    /** Why the task is held back by its key's limit, if it is. */
    private Optional<String> keyReason(Connection c, long taskId, String queue, String key) throws SQLException {
        Optional<Limit> limit = forQueue(queue).forKey(key);
        if (limit.isEmpty()) {
            return Optional.<String>empty();
        }
        long running;
        long earlier;
        // The key's RUNNING tasks, and its PENDING or RUNNING tasks enqueued before this one; each state
        // read apart, through an index that holds it (see Dialect.liveOfKeys).
        try (PreparedStatement ps = c.prepareStatement("SELECT SUM(r), SUM(CASE WHEN id < ? THEN 1 ELSE 0 END)"
                + " FROM (SELECT 0 AS r, id FROM (" + Dialect.liveOfKeys(TaskStatus.PENDING, 1) + ") p WHERE id < ?"
                + " UNION ALL SELECT 1, id FROM (" + Dialect.liveOfKeys(TaskStatus.RUNNING, 1) + ") q) u")) {
            ps.setLong(1, taskId);
            ps.setString(2, queue);
            ps.setString(3, key);
            ps.setLong(4, taskId);
            ps.setString(5, queue);
            ps.setString(6, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                running = rs.getLong(1);
                earlier = rs.getLong(2);
            }
        }
        int max = limit.get().maxRunning();
        if (running >= max) {
            return Optional.of("waiting for limit of key " + key + ": " + running + "/" + max + " running");
        }
        if (limit.get().fifo() && earlier > 0) {
            return Optional.of("waiting for the earlier task of key " + key + " (FIFO)");
        }
        Rate rate = limit.get().rate();
        if (rate != null && RateWindow.startsInWindow(c, dialect, queue, key, rate) >= rate.starts()) {
            return Optional.of("waiting for rate limit of key " + key + ": " + rate);
        }
        return Optional.<String>empty();
    }
}
