package io.dbtasks.server.dashboard;

import io.dbtasks.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * The numbers behind the overview and queue pages, kept in memory and refreshed in the background,
 * so a page load never counts the task table.
 *
 * <p><b>Counts by state and queue</b> come from one {@code GROUP BY queue, status} over the task
 * table (see {@link DashboardStore#countByQueueAndState()}), run by one background thread however
 * many people watch the dashboard. Its interval adapts to its cost: at least {@code
 * dbtasks.dashboard.counts-interval} (default 5 s), and at least 10 times the last run's duration,
 * so on a large table the database spends at most a tenth of one connection's time on it (its cost
 * on a large table is in BENCHMARKS.md). The counts are exact as of the
 * snapshot's time, which every page shows. We chose this over the alternatives: counters kept by
 * the store would add a write to one hot row on every claim and completion (the throughput path);
 * PostgreSQL's planner estimates give only a table total, not counts per state and queue, and only
 * as fresh as the last ANALYZE.
 *
 * <p><b>Throughput and failures over time</b> are read incrementally: each refresh counts, per
 * minute, the attempts written since the last one by a primary-key range on {@code
 * dbtasks_attempt}, so its cost follows the throughput, not the table size. The last hour is kept.
 *
 * <p>Thread-safe: snapshots are immutable and published through a volatile field.
 */
@Component
public class OverviewSnapshots implements DisposableBean {
    private static final Logger log = LoggerFactory.getLogger(OverviewSnapshots.class);
    /** Minutes of throughput history kept and charted. */
    static final int MINUTES = 60;
    /** At most this many attempts are read per refresh, so a huge backlog of history is read in steps. */
    static final long MAX_ATTEMPTS_PER_REFRESH = 500_000;

    private final DashboardStore store;
    private final io.dbtasks.DbTasks dbTasks;
    private volatile Cluster cluster;
    private final Duration minInterval;
    private final ScheduledExecutorService timer;
    private final ConcurrentSkipListMap<Long, long[]> perMinute = new ConcurrentSkipListMap<>();
    private volatile Snapshot snapshot;
    private volatile long countsDueNanos;
    private volatile Duration countsInterval;
    private long lastAttemptId = -1;

    /**
     * @param store the queries
     * @param dbTasks the engine, for paused queues and worker rows
     * @param minInterval the shortest interval between two counts, default 5 s
     */
    public OverviewSnapshots(
            DashboardStore store,
            io.dbtasks.DbTasks dbTasks,
            @Value("${dbtasks.dashboard.counts-interval:5s}") Duration minInterval) {
        this.store = store;
        this.dbTasks = dbTasks;
        this.minInterval = minInterval;
        this.countsInterval = minInterval;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dbtasks-dashboard-snapshot");
            t.setDaemon(true);
            return t;
        });
        long tick = Math.max(200, Math.min(1000, minInterval.toMillis()));
        timer.scheduleWithFixedDelay(this::refreshQuietly, 0, tick, TimeUnit.MILLISECONDS);
    }

    /**
     * The overview's numbers at one moment.
     *
     * @param takenAt the database time the counts were taken
     * @param tookMillis how long the counting query took
     * @param interval the current refresh interval
     * @param byQueue queue to state to count
     * @param earliestPending queue to the earliest run time of its PENDING tasks
     */
    public record Snapshot(
            Instant takenAt,
            long tookMillis,
            Duration interval,
            Map<String, Map<TaskStatus, Long>> byQueue,
            Map<String, Instant> earliestPending) {

        /** @return counts by state over all queues */
        public Map<TaskStatus, Long> totals() {
            Map<TaskStatus, Long> t = new EnumMap<>(TaskStatus.class);
            for (TaskStatus s : TaskStatus.values()) {
                t.put(s, 0L);
            }
            byQueue.values().forEach(m -> m.forEach((s, n) -> t.merge(s, n, Long::sum)));
            return t;
        }

        /** @return the queue's count in a state, 0 if none */
        public long count(String queue, TaskStatus status) {
            return byQueue.getOrDefault(queue, Map.of()).getOrDefault(status, 0L);
        }

        /** @return how long the oldest due PENDING task of the queue has waited at {@link #takenAt}, or zero */
        public Duration lag(String queue) {
            Instant earliest = earliestPending.get(queue);
            if (earliest == null || earliest.isAfter(takenAt)) {
                return Duration.ZERO;
            }
            return Duration.between(earliest, takenAt);
        }
    }

    /** Throughput and failures per minute for the chart: parallel arrays, oldest first. */
    public record Series(long[] epochSeconds, long[] succeeded, long[] failed) {}

    /** @return the latest snapshot, counting now if none was taken yet */
    public Snapshot snapshot() {
        Snapshot s = snapshot;
        if (s == null) {
            synchronized (this) {
                if (snapshot == null) {
                    refreshCounts();
                }
                s = snapshot;
            }
        }
        return s;
    }

    /** Takes a new snapshot now (after an operator action, so its result shows at once). */
    public void refreshSoon() {
        countsDueNanos = 0;
    }

    /** @return the last {@value #MINUTES} minutes, one point per minute, zeros where nothing finished */
    public Series series() {
        long nowMinute = Instant.now().getEpochSecond() / 60;
        long[] t = new long[MINUTES];
        long[] ok = new long[MINUTES];
        long[] bad = new long[MINUTES];
        for (int i = 0; i < MINUTES; i++) {
            long m = nowMinute - MINUTES + 1 + i;
            t[i] = m * 60;
            long[] v = perMinute.get(m);
            if (v != null) {
                ok[i] = v[0];
                bad[i] = v[1];
            }
        }
        return new Series(t, ok, bad);
    }

    /**
     * Paused queues and worker rows, re-read on every tick (at most a second old), so the overview
     * and queue pages need no query of their own.
     *
     * @param readAt the database time they were read
     * @param paused the paused queues
     * @param workers the recorded engines
     */
    public record Cluster(Instant readAt, java.util.Set<String> paused, List<io.dbtasks.WorkerInfo> workers) {}

    /** @return the latest paused queues and worker rows, reading them now if none were read yet */
    public Cluster cluster() {
        Cluster c = cluster;
        if (c == null) {
            refreshCluster();
            c = cluster;
        }
        return c;
    }

    /** Re-reads paused queues and workers now (after a pause or resume). */
    public void refreshCluster() {
        cluster = new Cluster(store.databaseNow(), dbTasks.pausedQueues(), dbTasks.workers());
    }

    private void refreshQuietly() {
        try {
            refreshCluster();
            if (System.nanoTime() - countsDueNanos >= 0 || snapshot == null) {
                synchronized (this) {
                    refreshCounts();
                }
            }
            refreshSeries();
        } catch (RuntimeException e) {
            log.warn("Dashboard snapshot failed; keeping the last one: {}", e.getMessage());
            countsDueNanos = System.nanoTime() + minInterval.toNanos();
        }
    }

    private void refreshCounts() {
        long start = System.nanoTime();
        Instant at = store.databaseNow();
        List<DashboardStore.StateCount> counts = store.countByQueueAndState();
        long took = Duration.ofNanos(System.nanoTime() - start).toMillis();
        Map<String, Map<TaskStatus, Long>> byQueue = new TreeMap<>();
        Map<String, Instant> earliest = new TreeMap<>();
        for (DashboardStore.StateCount c : counts) {
            byQueue.computeIfAbsent(c.queue(), q -> new EnumMap<>(TaskStatus.class))
                    .put(c.status(), c.count());
            if (c.earliestRunAt() != null) {
                earliest.merge(c.queue(), c.earliestRunAt(), (a, b) -> a.isBefore(b) ? a : b);
            }
        }
        Duration next = Duration.ofMillis(Math.max(minInterval.toMillis(), took * 10));
        countsInterval = next;
        countsDueNanos = System.nanoTime() + next.toNanos();
        snapshot = new Snapshot(at, took, next, byQueue, earliest);
    }

    private void refreshSeries() {
        long max = store.maxAttemptId();
        Instant since = Instant.now().minus(Duration.ofMinutes(MINUTES));
        if (lastAttemptId < 0) {
            lastAttemptId = Math.max(0, max - MAX_ATTEMPTS_PER_REFRESH);
        }
        if (max > lastAttemptId) {
            long upTo = Math.min(max, lastAttemptId + MAX_ATTEMPTS_PER_REFRESH);
            for (DashboardStore.MinuteOutcomes m : store.outcomesPerMinute(lastAttemptId, upTo, since)) {
                perMinute.merge(m.minute(), new long[] {m.succeeded(), m.failed()}, (a, b) ->
                        new long[] {a[0] + b[0], a[1] + b[1]});
            }
            lastAttemptId = upTo;
        } else if (max < lastAttemptId) {
            lastAttemptId = max; // the attempt table was emptied
        }
        perMinute.headMap(since.getEpochSecond() / 60 - 1).clear();
    }

    /** @return the queues any snapshot knows, sorted */
    public List<String> queues() {
        return new ArrayList<>(new TreeSet<>(snapshot().byQueue().keySet()));
    }

    /** @return the interval the counts are refreshed at now */
    public Duration countsInterval() {
        return countsInterval;
    }

    @Override
    public void destroy() {
        timer.shutdownNow();
    }
}
