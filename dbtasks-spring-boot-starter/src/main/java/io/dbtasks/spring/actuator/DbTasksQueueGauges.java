package io.dbtasks.spring.actuator;

import io.dbtasks.DbTasks;
import io.dbtasks.QueueDepth;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Queue gauges refreshed by one query ({@link DbTasks#queueDepths()}) per interval on a thread of
 * its own; a scrape reads the last values and never touches the database. Meters:
 *
 * <ul>
 *   <li>{@value #TASKS} [{@code dbtasks_queue_tasks}], tags {@code queue}, {@code state} ({@code
 *       pending}, {@code running}, {@code failed}, {@code waiting}): tasks in the queue by state,
 *       cluster-wide ({@code waiting}: workflow steps and batch callbacks waiting for their
 *       dependencies);
 *   <li>{@value #DUE} [{@code dbtasks_queue_due}], tag {@code queue}: PENDING tasks due now;
 *   <li>{@value #OLDEST_DUE_AGE} [{@code dbtasks_queue_oldest_due_age_seconds}], tag {@code queue}:
 *       how long the longest-waiting due task has been due, 0 when none is;
 *   <li>{@value #FOREIGN} [{@code dbtasks_queue_foreign}], tags {@code queue}, {@code runnable}
 *       ({@code elsewhere}: a live engine of the queue can run them; {@code nowhere}: none can, and
 *       they fail after the grace period): due tasks this instance does not claim, as of its last
 *       check ({@link DbTasks#foreignTasks()}, no query of its own);
 *   <li>{@value #KEY_TASKS} [{@code dbtasks_limit_key_tasks}], tags {@code queue}, {@code key},
 *       {@code state} ({@code running}, {@code waiting}): tasks of each concurrency key of a queue
 *       that has limits ({@link io.dbtasks.limit.Limits#load}, one query per such queue), for at
 *       most {@value #MAX_KEYS_PER_QUEUE} keys per queue, those with the most tasks, so that a queue
 *       of many tenants does not make a time series of each;
 *   <li>{@value #RUNNING_HERE} [{@code dbtasks_tasks_running}]: tasks this instance runs now;
 *   <li>{@value #DROPPED} [{@code dbtasks_events_dropped_total}]: events the metrics (or any)
 *       listener lost because it fell behind;
 *   <li>{@value #DEADLOCKS} [{@code dbtasks_database_deadlocks_total}]: this instance's transactions
 *       the database rolled back as deadlock victims or serialization failures ({@link
 *       DbTasks#deadlocks()}), retried or not.
 * </ul>
 *
 * A queue that has no such tasks any more reads 0. Thread-safe.
 */
public class DbTasksQueueGauges implements SmartLifecycle {
    /** Gauge of tasks by queue and state. */
    public static final String TASKS = "dbtasks.queue.tasks";
    /** Gauge of due tasks by queue. */
    public static final String DUE = "dbtasks.queue.due";
    /** Time gauge of the oldest due task's wait by queue. */
    public static final String OLDEST_DUE_AGE = "dbtasks.queue.oldest.due.age";
    /** Gauge of due tasks this instance leaves to other engines, by queue and whether one can run them. */
    public static final String FOREIGN = "dbtasks.queue.foreign";
    /** Gauge of tasks by queue, concurrency key and state, in queues with limits. */
    public static final String KEY_TASKS = "dbtasks.limit.key.tasks";
    /** The most concurrency keys of one queue with gauges of their own. */
    public static final int MAX_KEYS_PER_QUEUE = 100;
    /** Gauge of tasks running on this instance. */
    public static final String RUNNING_HERE = "dbtasks.tasks.running";
    /** Function counter of dropped events. */
    public static final String DROPPED = "dbtasks.events.dropped";
    /** Function counter of transactions rolled back as deadlock victims. */
    public static final String DEADLOCKS = "dbtasks.database.deadlocks";

    private static final Logger log = LoggerFactory.getLogger(DbTasksQueueGauges.class);

    private final DbTasks dbTasks;
    private final MeterRegistry registry;
    private final Duration interval;
    private final Map<String, AtomicLong> values = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> keyValues = new ConcurrentHashMap<>();
    private ScheduledExecutorService scheduler;

    /**
     * @param dbTasks the engine to measure
     * @param registry where the gauges go
     * @param interval how often to query, positive
     */
    public DbTasksQueueGauges(DbTasks dbTasks, MeterRegistry registry, Duration interval) {
        this.dbTasks = dbTasks;
        this.registry = registry;
        this.interval = interval;
        Gauge.builder(RUNNING_HERE, dbTasks, DbTasks::runningCount)
                .description("Tasks this instance runs now")
                .register(registry);
        FunctionCounter.builder(DROPPED, dbTasks, DbTasks::droppedEvents)
                .description("Events not delivered to a listener that fell behind")
                .register(registry);
        FunctionCounter.builder(DEADLOCKS, dbTasks, DbTasks::deadlocks)
                .description("Transactions the database rolled back as deadlock victims or serialization failures")
                .register(registry);
    }

    /** Queries the depths once and updates the gauges; failures are logged and retried next interval. */
    public void refresh() {
        try {
            Set<String> seen = new HashSet<>();
            for (QueueDepth d : dbTasks.queueDepths()) {
                seen.add(d.queue());
                value(TASKS, d.queue(), "pending").set(d.pending());
                value(TASKS, d.queue(), "running").set(d.running());
                value(TASKS, d.queue(), "failed").set(d.failed());
                value(TASKS, d.queue(), "waiting").set(d.waiting());
                value(DUE, d.queue(), null).set(d.dueNow());
                value(OLDEST_DUE_AGE, d.queue(), null).set(d.oldestDueAge().toMillis());
            }
            Map<String, Long> foreign = new java.util.HashMap<>();
            for (io.dbtasks.ForeignTasks f : dbTasks.foreignTasks()) {
                seen.add(f.queue());
                foreign.merge(
                        f.queue() + "\u0000" + (f.runnableElsewhere() ? "elsewhere" : "nowhere"), f.tasks(), Long::sum);
            }
            foreign.forEach((key, n) -> {
                String[] parts = key.split("\u0000", -1);
                value(FOREIGN, parts[0], parts[1]).set(n);
            });
            Set<String> keys = new HashSet<>();
            for (String queue : dbTasks.limits().list().stream()
                    .map(io.dbtasks.limit.Limit::queue)
                    .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new))) {
                dbTasks.limits().load(queue).stream()
                        .sorted(java.util.Comparator.comparingLong(
                                        (io.dbtasks.limit.KeyLoad l) -> l.running() + l.waiting())
                                .reversed())
                        .limit(MAX_KEYS_PER_QUEUE)
                        .forEach(l -> {
                            keys.add(keyValue(queue, l.key(), "running", l.running()));
                            keys.add(keyValue(queue, l.key(), "waiting", l.waiting()));
                        });
            }
            keyValues.forEach((key, v) -> {
                if (!keys.contains(key)) {
                    v.set(0);
                }
            });
            values.forEach((key, v) -> {
                if (key.startsWith(FOREIGN + "\u0000")) {
                    String[] parts = key.split("\u0000", -1);
                    if (!foreign.containsKey(parts[1] + "\u0000" + parts[2])) {
                        v.set(0);
                    }
                    return;
                }
                if (!seen.contains(key.split("\u0000", -1)[1])) {
                    v.set(0);
                }
            });
        } catch (RuntimeException e) {
            log.warn("dbtasks queue gauges not refreshed: {}", e.getMessage());
        }
    }

    /** Sets the gauge of one key and state, registering it on first use; returns its map key. */
    private String keyValue(String queue, String key, String state, long n) {
        String id = queue + "\u0000" + key + "\u0000" + state;
        keyValues
                .computeIfAbsent(id, k -> {
                    AtomicLong v = new AtomicLong();
                    Gauge.builder(KEY_TASKS, v, AtomicLong::get)
                            .tags(Tags.of("queue", queue, "key", key, "state", state))
                            .description("Tasks of a concurrency key by state, in queues with limits")
                            .register(registry);
                    return v;
                })
                .set(n);
        return id;
    }

    private AtomicLong value(String name, String queue, String state) {
        String key = name + "\u0000" + queue + "\u0000" + (state == null ? "" : state);
        return values.computeIfAbsent(key, k -> {
            AtomicLong v = new AtomicLong();
            Tags tags = state == null
                    ? Tags.of("queue", queue)
                    : Tags.of("queue", queue, name.equals(FOREIGN) ? "runnable" : "state", state);
            if (name.equals(OLDEST_DUE_AGE)) {
                TimeGauge.builder(name, v, TimeUnit.MILLISECONDS, AtomicLong::get)
                        .tags(tags)
                        .description("How long the longest-waiting due task has been due")
                        .register(registry);
            } else {
                Gauge.builder(name, v, AtomicLong::get)
                        .tags(tags)
                        .description(
                                name.equals(DUE)
                                        ? "PENDING tasks due now"
                                        : name.equals(FOREIGN)
                                                ? "Due tasks this instance leaves to engines that can run them"
                                                : "Tasks by queue and state")
                        .register(registry);
            }
            return v;
        });
    }

    @Override
    public synchronized void start() {
        if (scheduler != null) {
            return;
        }
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dbtasks-gauges");
            t.setDaemon(true);
            return t;
        });
        scheduler.scheduleWithFixedDelay(this::refresh, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public synchronized void stop() {
        if (scheduler != null) {
            scheduler.shutdownNow();
            scheduler = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return scheduler != null;
    }
}
