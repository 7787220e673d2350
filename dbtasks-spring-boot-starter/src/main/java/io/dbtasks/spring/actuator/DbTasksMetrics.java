package io.dbtasks.spring.actuator;

import io.dbtasks.event.TaskEvent;
import io.dbtasks.event.TaskEventListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts and times the engine's task events into Micrometer meters. Registered as an event
 * listener, so it runs on its own delivery thread and never slows the engine; events dropped
 * because it fell behind are counted by {@code dbtasks.events.dropped}.
 *
 * <p>Meters (Prometheus names in brackets):
 *
 * <ul>
 *   <li>{@value #ENQUEUED} [{@code dbtasks_tasks_enqueued_total}], tags {@code queue}, {@code kind}:
 *       new tasks written by this instance (duplicates of an idempotency key not counted);
 *   <li>{@value #CLAIMED} [{@code dbtasks_tasks_claimed_total}], tags {@code queue}, {@code kind}:
 *       claims by this instance;
 *   <li>{@value #ATTEMPTS} [{@code dbtasks_tasks_attempts_total}], tags {@code queue}, {@code kind},
 *       {@code outcome}: how attempts ended on this instance, {@code outcome} one of {@code
 *       succeeded}, {@code failed} (the task is FAILED), {@code retried} (a retry is scheduled),
 *       {@code cancelled}, {@code lease_lost}, {@code rescued} (an expired lease this instance
 *       rescued), {@code handed_back};
 *   <li>{@value #LONG_RUNNING} [{@code dbtasks_tasks_long_running_total}], tags {@code queue},
 *       {@code kind}: attempts past their long-running threshold, once per attempt;
 *   <li>{@value #EXECUTION} [{@code dbtasks_tasks_execution_seconds}], tags {@code queue}, {@code
 *       kind}, {@code outcome} ({@code succeeded}, {@code failed}, {@code retried}, {@code
 *       cancelled}): handler start to the attempt's outcome, with percentiles;
 *   <li>{@value #START_LAG} [{@code dbtasks_tasks_start_lag_seconds}], tags {@code queue}, {@code
 *       kind}: from the attempt's run-at (database clock) to its handler's start (this JVM's clock),
 *       with percentiles.
 * </ul>
 *
 * Thread-safe enough for its single delivery thread; the meters themselves are thread-safe.
 */
public final class DbTasksMetrics implements TaskEventListener {
    /** Counter of new tasks. */
    public static final String ENQUEUED = "dbtasks.tasks.enqueued";
    /** Counter of claims. */
    public static final String CLAIMED = "dbtasks.tasks.claimed";
    /** Counter of attempt outcomes. */
    public static final String ATTEMPTS = "dbtasks.tasks.attempts";
    /** Counter of long-running alerts. */
    public static final String LONG_RUNNING = "dbtasks.tasks.long.running";
    /** Timer of handler executions. */
    public static final String EXECUTION = "dbtasks.tasks.execution";
    /** Timer of the lag from due to start. */
    public static final String START_LAG = "dbtasks.tasks.start.lag";

    private final MeterRegistry registry;
    private final double[] percentiles;
    /** Handler start by fencing token (one per attempt), for the execution timer. */
    private final Map<Long, Instant> started = new ConcurrentHashMap<>();

    /**
     * @param registry where the meters go
     * @param percentiles the percentiles of the two timers, each in [0, 1]
     */
    public DbTasksMetrics(MeterRegistry registry, double[] percentiles) {
        this.registry = registry;
        this.percentiles = percentiles.clone();
    }

    @Override
    public void onTaskEvent(TaskEvent e) {
        Tags tags = Tags.of("queue", e.queue(), "kind", e.kind());
        switch (e.type()) {
            case ENQUEUED -> counter(ENQUEUED, tags).increment();
            case CLAIMED -> counter(CLAIMED, tags).increment();
            case STARTED -> {
                if (e.fencingToken() != null) {
                    started.put(e.fencingToken(), e.at());
                }
                if (e.runAt() != null) {
                    Duration lag = Duration.between(e.runAt(), e.at());
                    timer(START_LAG, tags).record(lag.isNegative() ? Duration.ZERO : lag);
                }
            }
            case SUCCEEDED -> ended(e, tags, "succeeded", true);
            case FAILED -> ended(e, tags, "failed", true);
            case RETRY_SCHEDULED -> ended(e, tags, "retried", true);
            case CANCELLED -> ended(e, tags, "cancelled", true);
            case LEASE_LOST -> ended(e, tags, "lease_lost", false);
            case RESCUED -> ended(e, tags, "rescued", false);
            case HANDED_BACK -> ended(e, tags, "handed_back", false);
            case LONG_RUNNING -> counter(LONG_RUNNING, tags).increment();
            default -> {
                // new event types are not counted until named here
            }
        }
    }

    private void ended(TaskEvent e, Tags tags, String outcome, boolean timed) {
        Tags withOutcome = tags.and("outcome", outcome);
        counter(ATTEMPTS, withOutcome).increment();
        Instant start = e.fencingToken() == null ? null : started.remove(e.fencingToken());
        if (timed && start != null) {
            Duration d = Duration.between(start, e.at());
            timer(EXECUTION, withOutcome).record(d.isNegative() ? Duration.ZERO : d);
        }
    }

    private Counter counter(String name, Tags tags) {
        return Counter.builder(name).tags(tags).register(registry);
    }

    private Timer timer(String name, Tags tags) {
        return Timer.builder(name)
                .tags(tags)
                .publishPercentiles(percentiles)
                .description(name.equals(EXECUTION) ? "Handler run time per attempt" : "Run-at to handler start")
                .register(registry);
    }
}
