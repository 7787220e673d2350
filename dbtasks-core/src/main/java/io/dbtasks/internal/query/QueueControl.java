package io.dbtasks.internal.query;

import io.dbtasks.WorkerInfo;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Capabilities;
import io.dbtasks.internal.support.Jdbc;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Queue pauses and the engine's worker row.
 *
 * <p>Pauses live in {@code dbtasks_queue_pause}, one row per paused queue, so they hold across the
 * cluster and across restarts. The claim loops ask {@link #isPaused} before every claim; the answer
 * comes from a snapshot of that table re-read at most once per refresh interval by whichever loop
 * finds it stale, so a pause made on another instance takes effect within that interval (and at
 * once on the instance that made it). A task already claimed or running is not affected.
 *
 * <p>Thread-safe.
 */
public final class QueueControl {
    private final Jdbc jdbc;
    private final Dialect dialect;
    private final long refreshNanos;
    private final Consumer<String> wake;
    private volatile Set<String> paused = Set.of();
    private volatile long readAt = Long.MIN_VALUE;

    public QueueControl(Jdbc jdbc, Dialect dialect, long refreshMillis, Consumer<String> wake) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.refreshNanos = refreshMillis * 1_000_000L;
        this.wake = wake;
    }

    /** @return whether {@code queue} is paused, as of at most one refresh interval ago */
    public boolean isPaused(String queue) {
        long now = System.nanoTime();
        if (readAt == Long.MIN_VALUE || now - readAt > refreshNanos) {
            synchronized (this) {
                if (readAt == Long.MIN_VALUE || now - readAt > refreshNanos) {
                    try {
                        paused = read();
                    } catch (RuntimeException e) {
                        // keep the last snapshot: a failing database fails the claim anyway
                    }
                    readAt = System.nanoTime();
                }
            }
        }
        return paused.contains(queue);
    }

    public Set<String> paused() {
        Set<String> now = read();
        synchronized (this) {
            paused = now;
            readAt = System.nanoTime();
        }
        return now;
    }

    public boolean pause(String queue, String by) {
        boolean changed = jdbc.withConnection("Pause queue " + queue, c -> {
            if (exists(c, queue)) {
                return false;
            }
            try (PreparedStatement ps =
                    c.prepareStatement("INSERT INTO dbtasks_queue_pause (queue, paused_at, paused_by)" + " VALUES (?, "
                            + dialect.now() + ", ?)")) {
                ps.setString(1, queue);
                ps.setString(2, by);
                ps.executeUpdate();
                return true;
            } catch (java.sql.SQLException e) {
                if (exists(c, queue)) { // paused at the same moment elsewhere
                    return false;
                }
                throw e;
            }
        });
        paused();
        return changed;
    }

    public boolean resume(String queue) {
        int n = jdbc.withConnection("Resume queue " + queue, c -> {
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_queue_pause WHERE queue = ?")) {
                ps.setString(1, queue);
                return ps.executeUpdate();
            }
        });
        paused();
        wake.accept(queue);
        return n > 0;
    }

    private static boolean exists(java.sql.Connection c, String queue) throws java.sql.SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM dbtasks_queue_pause WHERE queue = ?")) {
            ps.setString(1, queue);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    private Set<String> read() {
        return jdbc.withConnection("Read paused queues", c -> {
            java.util.SortedSet<String> s = new TreeSet<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT queue FROM dbtasks_queue_pause");
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    s.add(rs.getString(1));
                }
            }
            return java.util.Collections.unmodifiableSortedSet(s);
        });
    }

    /** Writes or refreshes a worker row that advertises no kinds (as engines before kinds were). */
    void registerWorker(String workerId, Map<String, Integer> queues) {
        registerWorker(workerId, queues, null, null);
    }

    /**
     * Writes or refreshes this engine's worker row (database time) with what it can run.
     *
     * @param kinds its kinds, one per line ({@code null}: it claims every kind)
     * @param jobTargets its job targets, one per line ({@code null}: any target, or no job kind)
     */
    public void registerWorker(String workerId, Map<String, Integer> queues, String kinds, String jobTargets) {
        String encoded = encode(queues);
        jdbc.withConnection("Register worker " + workerId, c -> {
            try (PreparedStatement ps = c.prepareStatement("UPDATE dbtasks_worker SET queues = ?, kinds = ?,"
                    + " job_targets = ?, heartbeat_at = " + dialect.now() + " WHERE worker_id = ?")) {
                ps.setString(1, encoded);
                ps.setString(2, kinds);
                ps.setString(3, jobTargets);
                ps.setString(4, workerId);
                if (ps.executeUpdate() > 0) {
                    return null;
                }
            }
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO dbtasks_worker (worker_id, queues, kinds, job_targets, started_at, heartbeat_at)"
                            + " VALUES (?, ?, ?, ?, " + dialect.now() + ", " + dialect.now() + ")")) {
                ps.setString(1, workerId);
                ps.setString(2, encoded);
                ps.setString(3, kinds);
                ps.setString(4, jobTargets);
                ps.executeUpdate();
            }
            return null;
        });
    }

    public void unregisterWorker(String workerId) {
        jdbc.withConnection("Unregister worker " + workerId, c -> {
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_worker WHERE worker_id = ?")) {
                ps.setString(1, workerId);
                return ps.executeUpdate();
            }
        });
    }

    public List<WorkerInfo> workers() {
        return jdbc.withConnection("List workers", c -> {
            List<WorkerInfo> list = new ArrayList<>();
            try (PreparedStatement ps =
                            c.prepareStatement("SELECT worker_id, queues, started_at, heartbeat_at, kinds, job_targets"
                                    + " FROM dbtasks_worker ORDER BY worker_id");
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    list.add(new WorkerInfo(
                            rs.getString("worker_id"),
                            decode(rs.getString("queues")),
                            dialect.getInstant(rs, "started_at"),
                            dialect.getInstant(rs, "heartbeat_at"),
                            Capabilities.decode(rs.getString("kinds")),
                            Capabilities.decode(rs.getString("job_targets"))));
                }
            }
            return list;
        });
    }

    /** {@code name=concurrency} pairs joined by newlines; queue names never hold a newline in practice. */
    static String encode(Map<String, Integer> queues) {
        StringBuilder sb = new StringBuilder();
        queues.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
            if (sb.length() > 0) {
                sb.append('\n');
            }
            sb.append(e.getKey().replace('\n', ' ')).append('=').append(e.getValue());
        });
        String s = sb.toString();
        return s.length() > 4000 ? s.substring(0, 4000) : s;
    }

    public static Map<String, Integer> decode(String s) {
        Map<String, Integer> m = new LinkedHashMap<>();
        if (s == null || s.isEmpty()) {
            return m;
        }
        for (String line : s.split("\n")) {
            int eq = line.lastIndexOf('=');
            if (eq > 0) {
                try {
                    m.put(line.substring(0, eq), Integer.parseInt(line.substring(eq + 1)));
                } catch (NumberFormatException e) {
                    // a truncated last pair
                }
            }
        }
        return m;
    }
}
