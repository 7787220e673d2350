package io.dbtasks.chaos;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Checks the limits workload (every chaos task transactional, with a concurrency key whose limit is
 * 1) after the queue drained, from intervals the database clock gave, on top of {@link Checker}.
 *
 * <p>What "two runs of a key overlap" means when a holder is paused past its lease: the paused
 * holder's handler still runs when it wakes up, after the rescue let another engine run the task
 * (or another task of the key), so handler runs do overlap; what must not is their effects. An
 * effect is the row the handler wrote in the engine's transaction, which commits only if the run's
 * fencing token still holds the task; its interval is the handler's start and end by the database
 * clock. And the database's own view of the limit, the RUNNING intervals (an attempt's {@code
 * started_at} to its {@code finished_at}, which for an expired lease is the rescue), must not overlap
 * either: a task whose lease expired still counts until it is rescued.
 *
 * <ul>
 *   <li>{@code effectOverlaps}: committed effects of a key that began before an earlier one of the
 *       key ended: must be 0;
 *   <li>{@code runningOverlaps}: attempts of a key whose RUNNING interval began before an earlier one
 *       of the key ended: must be 0;
 *   <li>{@code effects}, {@code attempts}, {@code keys}: what the above were computed from;
 *   <li>informational: {@code refusedRuns}, handler runs whose effect did not commit (a lost lease, a
 *       killed connection); {@code runOverlaps}, handler runs of a key that overlapped another run of
 *       the key, the paused holders' late runs among them; {@code refusedOverlaps}, those of them
 *       whose effect did not commit.
 * </ul>
 */
public final class LimitChecker {
    private LimitChecker() {}

    /**
     * @param ds the chaos database
     * @return the figures
     * @throws SQLException if a query fails
     */
    public static Map<String, Long> check(DataSource ds) throws SQLException {
        Map<String, Long> m = new LinkedHashMap<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            Map<String, List<long[]>> effects = intervals(
                    s,
                    "SELECT t.concurrency_key, e.started_us, e.ended_us, 1 FROM chaos_effect e"
                            + " JOIN dbtasks_task t ON t.id = e.task_id",
                    false);
            Map<String, List<long[]>> attempts = intervals(
                    s,
                    "SELECT t.concurrency_key, a.started_at, a.finished_at, 1 FROM dbtasks_attempt a"
                            + " JOIN dbtasks_task t ON t.id = a.task_id WHERE t.queue = '" + ChaosSchema.QUEUE + "'",
                    true);
            Map<String, List<long[]>> runs = intervals(
                    s,
                    "SELECT t.concurrency_key, r.started_us, r.ended_us, CASE WHEN EXISTS (SELECT 1 FROM"
                            + " chaos_effect e WHERE e.task_id = r.task_id AND e.token = r.token) THEN 1 ELSE 0"
                            + " END FROM chaos_interval r JOIN dbtasks_task t ON t.id = r.task_id",
                    false);
            m.put("effectOverlaps", overlaps(effects, false));
            m.put("runningOverlaps", overlaps(attempts, false));
            m.put("effects", count(effects));
            m.put("attempts", count(attempts));
            m.put("keys", (long) effects.size());
            m.put(
                    "refusedRuns",
                    runs.values().stream()
                            .flatMap(List::stream)
                            .filter(r -> r[2] == 0)
                            .count());
            m.put("runOverlaps", overlaps(runs, false));
            m.put("refusedOverlaps", overlaps(runs, true));
        }
        return m;
    }

    /** Intervals {start, end, committed} by key; timestamps are read as microseconds. */
    private static Map<String, List<long[]>> intervals(Statement s, String sql, boolean timestamps)
            throws SQLException {
        Map<String, List<long[]>> byKey = new HashMap<>();
        try (ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                long start = timestamps ? micros(rs.getTimestamp(2)) : rs.getLong(2);
                long end = timestamps ? micros(rs.getTimestamp(3)) : rs.getLong(3);
                byKey.computeIfAbsent(rs.getString(1), k -> new ArrayList<>())
                        .add(new long[] {start, end, rs.getLong(4)});
            }
        }
        return byKey;
    }

    private static long micros(java.sql.Timestamp t) {
        return t.getTime() / 1000 * 1_000_000 + t.getNanos() / 1000;
    }

    /**
     * Counts the intervals that began before an earlier interval of their key ended (an end and a
     * start at the same instant do not overlap); with {@code refusedOnly}, only pairs of which one
     * did not commit are counted, each overlapping interval once.
     */
    private static long overlaps(Map<String, List<long[]>> byKey, boolean refusedOnly) {
        long n = 0;
        for (List<long[]> list : byKey.values()) {
            list.sort(Comparator.comparingLong((long[] r) -> r[0]));
            long latestEnd = Long.MIN_VALUE;
            long latestEndCommitted = 1;
            for (long[] r : list) {
                if (r[0] < latestEnd && (!refusedOnly || r[2] == 0 || latestEndCommitted == 0)) {
                    n++;
                }
                if (r[1] > latestEnd) {
                    latestEnd = r[1];
                    latestEndCommitted = r[2];
                }
            }
        }
        return n;
    }

    private static long count(Map<String, List<long[]>> byKey) {
        return byKey.values().stream().mapToLong(List::size).sum();
    }
}
