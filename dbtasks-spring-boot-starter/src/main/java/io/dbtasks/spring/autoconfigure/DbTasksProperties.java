package io.dbtasks.spring.autoconfigure;

import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.spring.TaskTemplate;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code dbtasks.*} properties of the auto-configured {@link DbTasks}. Unset values take the
 * engine's defaults (the {@code DEFAULT_*} constants of {@link DbTasks}); they are validated when the
 * engine is built, so an out-of-range value fails the startup with the engine's message.
 *
 * <p>Bound once at startup; not meant to be changed afterwards, and not thread-safe.
 */
@ConfigurationProperties("dbtasks")
public class DbTasksProperties {
    /** Whether to auto-configure a DbTasks engine at all. */
    private boolean enabled = true;

    /** Worker settings. */
    private final Workers workers = new Workers();

    /**
     * Queues this instance works, by name, with the most tasks of each running at once. Empty means
     * the engine default: queue "default" with 4 workers.
     */
    private Map<String, Integer> queues = new LinkedHashMap<>();

    /** How long a claim holds a task without a heartbeat before another worker may rescue it. */
    private Duration lease = DbTasks.DEFAULT_LEASE;

    /** How often leases of running tasks are renewed; unset means a third of the lease. */
    private Duration heartbeatInterval;

    /** How often an idle worker looks for due tasks. */
    private Duration pollInterval = DbTasks.DEFAULT_POLL_INTERVAL;

    /**
     * PostgreSQL: the least time between two wake-ups (NOTIFY) of other instances' workers that this
     * instance's enqueues into one queue send; later enqueues share a signal sent after their commit.
     * 0 sends one per enqueue.
     */
    private Duration enqueueSignalInterval = DbTasks.DEFAULT_ENQUEUE_SIGNAL_INTERVAL;

    /** How often expired leases are looked for and their tasks rescued. */
    private Duration rescueInterval = DbTasks.DEFAULT_RESCUE_INTERVAL;

    /**
     * How long due tasks that no live engine of their queue can run (no handler for the kind, a job
     * target none allow-lists) wait before they are failed; 0 never fails them. See {@code
     * DbTasks.Builder#unclaimableGrace}.
     */
    private Duration unclaimableGrace = DbTasks.DEFAULT_UNCLAIMABLE_GRACE;

    /** How long shutdown waits for running tasks before handing them back to PENDING. */
    private Duration shutdownTimeout = DbTasks.DEFAULT_SHUTDOWN_TIMEOUT;

    /** The most tasks one claim statement takes, 1 to 1000. */
    private int claimBatch = DbTasks.DEFAULT_CLAIM_BATCH;

    /**
     * Whether queues of short tasks claim a few beyond their free slots (see {@code
     * DbTasks.Builder#claimAhead}); off means a new higher-priority task never waits behind claimed ones.
     */
    private boolean claimAhead = true;

    /** Attempts for tasks whose request does not say, at least 1. */
    private int defaultMaxAttempts = DbTasks.DEFAULT_MAX_ATTEMPTS;

    /** Per-attempt timeout for tasks whose request does not say; unset means none. */
    private Duration defaultTimeout;

    /** Longest a statement or commit of the engine may take; {@code 0} turns the limit off. */
    private Duration statementTimeout = DbTasks.DEFAULT_STATEMENT_TIMEOUT;

    /** Backoff between attempts for tasks whose request does not say. */
    private final Retry defaultRetry = new Retry();

    /** Whether to run the dbtasks Flyway migrations (own history table) at startup. */
    private boolean migrate = true;

    /**
     * PostgreSQL: whether a pooler in transaction mode (PgBouncer {@code pool_mode = transaction})
     * sits in between; unset means detect it. See {@code DbTasks.Builder.transactionPooling}.
     */
    private Boolean transactionPooling;

    /** The lease owner name of this instance; unset means host:pid:random. */
    private String workerId;

    /** Deletion of old finished tasks, run-once guards and inbox records. */
    private final Retention retention = new Retention();

    /** Alerts for tasks that run too long. */
    private final LongRunning longRunning = new LongRunning();

    /** Micrometer metrics of the engine. */
    private final Metrics metrics = new Metrics();

    /** The actuator health indicator {@code dbtasks}. */
    private final Health health = new Health();

    /** Trace context propagation from the enqueuing span to the task's execution. */
    private final Tracing tracing = new Tracing();

    /** @return whether the engine is auto-configured */
    public boolean isEnabled() {
        return enabled;
    }

    /** @param enabled whether the engine is auto-configured */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** @return the worker settings; never {@code null} */
    public Workers getWorkers() {
        return workers;
    }

    /** @return queue name to concurrency; never {@code null}, empty for the engine default */
    public Map<String, Integer> getQueues() {
        return queues;
    }

    /** @param queues queue name to concurrency */
    public void setQueues(Map<String, Integer> queues) {
        this.queues = queues;
    }

    /** @return the lease */
    public Duration getLease() {
        return lease;
    }

    /** @param lease the lease */
    public void setLease(Duration lease) {
        this.lease = lease;
    }

    /** @return the heartbeat interval, or {@code null} for a third of the lease */
    public Duration getHeartbeatInterval() {
        return heartbeatInterval;
    }

    /** @param heartbeatInterval the heartbeat interval, or {@code null} */
    public void setHeartbeatInterval(Duration heartbeatInterval) {
        this.heartbeatInterval = heartbeatInterval;
    }

    /** @return the poll interval */
    public Duration getPollInterval() {
        return pollInterval;
    }

    /** @param pollInterval the poll interval */
    public void setPollInterval(Duration pollInterval) {
        this.pollInterval = pollInterval;
    }

    /** @return the least time between two cross-instance wake-ups of one queue */
    public Duration getEnqueueSignalInterval() {
        return enqueueSignalInterval;
    }

    /** @param enqueueSignalInterval the least time between two cross-instance wake-ups of one queue */
    public void setEnqueueSignalInterval(Duration enqueueSignalInterval) {
        this.enqueueSignalInterval = enqueueSignalInterval;
    }

    /** @return the rescue interval */
    public Duration getRescueInterval() {
        return rescueInterval;
    }

    /** @param rescueInterval the rescue interval */
    public void setRescueInterval(Duration rescueInterval) {
        this.rescueInterval = rescueInterval;
    }

    /** @return how long tasks no live engine can run wait before they are failed */
    public Duration getUnclaimableGrace() {
        return unclaimableGrace;
    }

    /** @param unclaimableGrace how long tasks no live engine can run wait before they are failed */
    public void setUnclaimableGrace(Duration unclaimableGrace) {
        this.unclaimableGrace = unclaimableGrace;
    }

    /** @return how long shutdown waits for running tasks */
    public Duration getShutdownTimeout() {
        return shutdownTimeout;
    }

    /** @param shutdownTimeout how long shutdown waits for running tasks */
    public void setShutdownTimeout(Duration shutdownTimeout) {
        this.shutdownTimeout = shutdownTimeout;
    }

    /** @return the claim batch size */
    public int getClaimBatch() {
        return claimBatch;
    }

    /** @param claimBatch the claim batch size, 1 to 1000 */
    public void setClaimBatch(int claimBatch) {
        this.claimBatch = claimBatch;
    }

    /** @return whether short tasks are claimed ahead of free slots */
    public boolean isClaimAhead() {
        return claimAhead;
    }

    /** @param claimAhead {@code false} to claim only for free slots */
    public void setClaimAhead(boolean claimAhead) {
        this.claimAhead = claimAhead;
    }

    /** @return the default max attempts */
    public int getDefaultMaxAttempts() {
        return defaultMaxAttempts;
    }

    /** @param defaultMaxAttempts the default max attempts, at least 1 */
    public void setDefaultMaxAttempts(int defaultMaxAttempts) {
        this.defaultMaxAttempts = defaultMaxAttempts;
    }

    /** @return the default per-attempt timeout, or {@code null} for none */
    public Duration getDefaultTimeout() {
        return defaultTimeout;
    }

    /** @return the statement timeout; see {@code DbTasks.Builder#statementTimeout} */
    public Duration getStatementTimeout() {
        return statementTimeout;
    }

    /** @param statementTimeout the statement timeout; {@code 0} turns it off */
    public void setStatementTimeout(Duration statementTimeout) {
        this.statementTimeout = statementTimeout;
    }

    /** @param defaultTimeout the default per-attempt timeout, or {@code null} for none */
    public void setDefaultTimeout(Duration defaultTimeout) {
        this.defaultTimeout = defaultTimeout;
    }

    /** @return the default retry settings; never {@code null} */
    public Retry getDefaultRetry() {
        return defaultRetry;
    }

    /** @return whether migrations run at startup */
    public boolean isMigrate() {
        return migrate;
    }

    /** @param migrate whether migrations run at startup */
    public void setMigrate(boolean migrate) {
        this.migrate = migrate;
    }

    /** @return whether a transaction pooler sits in between, or {@code null} to detect it */
    public Boolean getTransactionPooling() {
        return transactionPooling;
    }

    /** @param transactionPooling {@code true} behind a transaction pooler, {@code false} if not, {@code null} to detect */
    public void setTransactionPooling(Boolean transactionPooling) {
        this.transactionPooling = transactionPooling;
    }

    /** @return the worker id, or {@code null} for a generated one */
    public String getWorkerId() {
        return workerId;
    }

    /** @param workerId the worker id, or {@code null} for a generated one */
    public void setWorkerId(String workerId) {
        this.workerId = workerId;
    }

    /** @return the retention settings; never {@code null} */
    public Retention getRetention() {
        return retention;
    }

    /** @return the long-running alert settings; never {@code null} */
    public LongRunning getLongRunning() {
        return longRunning;
    }

    /** @return the metrics settings; never {@code null} */
    public Metrics getMetrics() {
        return metrics;
    }

    /** @return the health indicator settings; never {@code null} */
    public Health getHealth() {
        return health;
    }

    /** @return the tracing settings; never {@code null} */
    public Tracing getTracing() {
        return tracing;
    }

    /**
     * {@code dbtasks.retention.*}: scheduled, batched deletion (1,000 rows per statement, aged by the
     * database clock) of finished tasks with their attempts, run-once guards and inbox records, by
     * one instance of the cluster at a time (lease lock {@code dbtasks.retention}). A zero age keeps
     * those rows forever. {@code dbtasks.retention.queues.<queue>.*} overrides the ages of finished
     * tasks for one queue.
     */
    public static class Retention {
        /** Whether this instance sweeps at all (it needs workers enabled). */
        private boolean enabled = true;

        /** How often to sweep. */
        private Duration interval = DbTasks.DEFAULT_RETENTION_INTERVAL;

        /** How long SUCCEEDED tasks are kept after they finished; 0 keeps them. */
        private Duration succeeded = DbTasks.DEFAULT_SUCCEEDED_RETENTION;

        /** How long FAILED tasks are kept after they finished; 0 keeps them. */
        private Duration failed = DbTasks.DEFAULT_FAILED_RETENTION;

        /** How long CANCELLED tasks are kept after they finished; 0 keeps them. */
        private Duration cancelled = DbTasks.DEFAULT_FAILED_RETENTION;

        /**
         * How long run-once guard rows are kept after their last change; 0 keeps them. A key whose
         * row is deleted may run again: keep them longer than a key can recur.
         */
        private Duration guards = Duration.ZERO;

        /** How long inbox records are kept; 0 keeps them. A message redelivered after that is processed again. */
        private Duration inbox = Duration.ZERO;

        /**
         * Ages of finished tasks by queue, overriding succeeded, failed and cancelled for that queue; a
         * state not set keeps the default age, 0 keeps the queue's tasks in that state. Where history
         * is partitioned by day, a day is dropped whole only once older than the longest age of any
         * queue, so a queue kept longer keeps its days and the other queues' rows in them are deleted
         * row by row. A queue name with anything but lower-case letters, digits and '-' goes in brackets
         * (dbtasks.retention.queues[mail.out].succeeded), or Spring Boot changes the key and the age
         * applies to no queue.
         */
        private Map<String, QueueRetention> queues = new LinkedHashMap<>();

        /** @return whether retention runs */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether retention runs */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the sweep interval */
        public Duration getInterval() {
            return interval;
        }

        /** @param interval the sweep interval, positive */
        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        /** @return the SUCCEEDED age */
        public Duration getSucceeded() {
            return succeeded;
        }

        /** @param succeeded the SUCCEEDED age; 0 keeps them */
        public void setSucceeded(Duration succeeded) {
            this.succeeded = succeeded;
        }

        /** @return the FAILED age */
        public Duration getFailed() {
            return failed;
        }

        /** @param failed the FAILED age; 0 keeps them */
        public void setFailed(Duration failed) {
            this.failed = failed;
        }

        /** @return the CANCELLED age */
        public Duration getCancelled() {
            return cancelled;
        }

        /** @param cancelled the CANCELLED age; 0 keeps them */
        public void setCancelled(Duration cancelled) {
            this.cancelled = cancelled;
        }

        /** @return the guard age */
        public Duration getGuards() {
            return guards;
        }

        /** @param guards the guard age; 0 keeps them */
        public void setGuards(Duration guards) {
            this.guards = guards;
        }

        /** @return the inbox age */
        public Duration getInbox() {
            return inbox;
        }

        /** @param inbox the inbox age; 0 keeps them */
        public void setInbox(Duration inbox) {
            this.inbox = inbox;
        }

        /** @return the ages by queue, keyed by queue name; never {@code null}, mutable */
        public Map<String, QueueRetention> getQueues() {
            return queues;
        }

        /** @param queues the ages by queue, keyed by queue name */
        public void setQueues(Map<String, QueueRetention> queues) {
            this.queues = queues;
        }
    }

    /**
     * {@code dbtasks.retention.queues.<queue>.*}: how long one queue's finished tasks are kept, by
     * state. A state left unset ({@code null}) keeps the default age of {@code dbtasks.retention.*};
     * 0 keeps them forever.
     */
    public static class QueueRetention {
        /** How long the queue's SUCCEEDED tasks are kept after they finished; 0 keeps them, unset the default. */
        private Duration succeeded;

        /** How long the queue's FAILED tasks are kept after they finished; 0 keeps them, unset the default. */
        private Duration failed;

        /** How long the queue's CANCELLED tasks are kept after they finished; 0 keeps them, unset the default. */
        private Duration cancelled;

        /** @return the queue's SUCCEEDED age; {@code null} for the default */
        public Duration getSucceeded() {
            return succeeded;
        }

        /** @param succeeded the queue's SUCCEEDED age; 0 keeps them, {@code null} for the default */
        public void setSucceeded(Duration succeeded) {
            this.succeeded = succeeded;
        }

        /** @return the queue's FAILED age; {@code null} for the default */
        public Duration getFailed() {
            return failed;
        }

        /** @param failed the queue's FAILED age; 0 keeps them, {@code null} for the default */
        public void setFailed(Duration failed) {
            this.failed = failed;
        }

        /** @return the queue's CANCELLED age; {@code null} for the default */
        public Duration getCancelled() {
            return cancelled;
        }

        /** @param cancelled the queue's CANCELLED age; 0 keeps them, {@code null} for the default */
        public void setCancelled(Duration cancelled) {
            this.cancelled = cancelled;
        }
    }

    /**
     * {@code dbtasks.long-running.*}: a task whose handler runs past its threshold publishes a
     * LONG_RUNNING event, logs a warning and counts in {@code dbtasks.tasks.long.running}, once per
     * attempt. A kind's threshold wins over its queue's, which wins over the default; 0 means never.
     */
    public static class LongRunning {
        /** The threshold for tasks whose kind and queue name none; 0 means never. */
        private Duration threshold = Duration.ZERO;

        /** Thresholds by queue name. */
        private Map<String, Duration> queues = new LinkedHashMap<>();

        /** Thresholds by task kind. */
        private Map<String, Duration> kinds = new LinkedHashMap<>();

        /** @return the default threshold */
        public Duration getThreshold() {
            return threshold;
        }

        /** @param threshold the default threshold; 0 for never */
        public void setThreshold(Duration threshold) {
            this.threshold = threshold;
        }

        /** @return thresholds by queue; never {@code null} */
        public Map<String, Duration> getQueues() {
            return queues;
        }

        /** @param queues thresholds by queue */
        public void setQueues(Map<String, Duration> queues) {
            this.queues = queues;
        }

        /** @return thresholds by kind; never {@code null} */
        public Map<String, Duration> getKinds() {
            return kinds;
        }

        /** @param kinds thresholds by kind */
        public void setKinds(Map<String, Duration> kinds) {
            this.kinds = kinds;
        }
    }

    /** {@code dbtasks.metrics.*}: Micrometer meters, registered when a MeterRegistry bean exists. */
    public static class Metrics {
        /** Whether to register the dbtasks meters. */
        private boolean enabled = true;

        /**
         * How often the queue gauges (depth by state, due now, oldest due age) are refreshed, by one
         * query per interval on one instance's connection (scrapes read the last values).
         */
        private Duration gaugeInterval = Duration.ofSeconds(15);

        /** Percentiles published for the execution and start-lag timers. */
        private double[] percentiles = {0.5, 0.95, 0.99};

        /** @return whether meters are registered */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether meters are registered */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the gauge refresh interval */
        public Duration getGaugeInterval() {
            return gaugeInterval;
        }

        /** @param gaugeInterval the gauge refresh interval, positive */
        public void setGaugeInterval(Duration gaugeInterval) {
            this.gaugeInterval = gaugeInterval;
        }

        /** @return the timer percentiles */
        public double[] getPercentiles() {
            return percentiles;
        }

        /** @param percentiles the timer percentiles, each in [0, 1] */
        public void setPercentiles(double[] percentiles) {
            this.percentiles = percentiles;
        }
    }

    /** {@code dbtasks.health.*}: the {@code dbtasks} actuator health indicator. */
    public static class Health {
        /**
         * A claim loop that has not gone round for this long makes the indicator DOWN (a loop goes
         * round at least every poll interval, and a claim is bounded by the statement timeout).
         */
        private Duration claimLoopStall = Duration.ofSeconds(60);

        /** A rescue sweep not completed for this long makes the indicator DOWN. */
        private Duration rescueStall = Duration.ofMinutes(5);

        /** @return the claim loop stall limit */
        public Duration getClaimLoopStall() {
            return claimLoopStall;
        }

        /** @param claimLoopStall the claim loop stall limit */
        public void setClaimLoopStall(Duration claimLoopStall) {
            this.claimLoopStall = claimLoopStall;
        }

        /** @return the rescue stall limit */
        public Duration getRescueStall() {
            return rescueStall;
        }

        /** @param rescueStall the rescue stall limit */
        public void setRescueStall(Duration rescueStall) {
            this.rescueStall = rescueStall;
        }
    }

    /**
     * {@code dbtasks.tracing.*}: with an ObservationRegistry bean, an enqueue through {@link
     * TaskTemplate} runs in a {@code dbtasks.enqueue} observation whose W3C {@code traceparent} is
     * stored with the task, and each execution of a starter-registered handler runs in a {@code
     * dbtasks.execute} observation that continues that trace.
     */
    public static class Tracing {
        /** Whether to observe enqueues and executions and propagate the trace context. */
        private boolean enabled = true;

        /** @return whether tracing is on */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether tracing is on */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** {@code dbtasks.workers.*}. */
    public static class Workers {
        /**
         * Whether this instance claims and runs tasks. False makes a producer-only engine that
         * enqueues, queries and operates but never claims.
         */
        private boolean enabled = true;

        /** @return whether this instance runs tasks */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether this instance runs tasks */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /**
     * {@code dbtasks.default-retry.*}: the engine's default {@link RetryPolicy}. The defaults equal
     * {@link RetryPolicy#DEFAULT}.
     */
    public static class Retry {
        /** Fixed waits, or exponential waits with a cap and jitter. */
        private RetryPolicy.Backoff backoff = RetryPolicy.DEFAULT.backoff();

        /** The wait before the first retry; for fixed backoff, before every retry. */
        private Duration initial = RetryPolicy.DEFAULT.initial();

        /** Growth of the wait per attempt (exponential only), at least 1. */
        private double multiplier = RetryPolicy.DEFAULT.multiplier();

        /** Cap on any wait (exponential only). */
        private Duration max = RetryPolicy.DEFAULT.max();

        /** Fraction of each wait drawn at random, 0 to 1 (exponential only). */
        private double jitter = RetryPolicy.DEFAULT.jitter();

        /**
         * @return the policy these settings describe
         * @throws IllegalArgumentException if a value is out of range
         */
        public RetryPolicy toPolicy() {
            return backoff == RetryPolicy.Backoff.FIXED
                    ? RetryPolicy.fixed(initial)
                    : RetryPolicy.exponential(initial, multiplier, max, jitter);
        }

        /** @return the kind of backoff */
        public RetryPolicy.Backoff getBackoff() {
            return backoff;
        }

        /** @param backoff the kind of backoff */
        public void setBackoff(RetryPolicy.Backoff backoff) {
            this.backoff = backoff;
        }

        /** @return the first (fixed: every) wait */
        public Duration getInitial() {
            return initial;
        }

        /** @param initial the first (fixed: every) wait */
        public void setInitial(Duration initial) {
            this.initial = initial;
        }

        /** @return the growth per attempt */
        public double getMultiplier() {
            return multiplier;
        }

        /** @param multiplier the growth per attempt */
        public void setMultiplier(double multiplier) {
            this.multiplier = multiplier;
        }

        /** @return the cap on any wait */
        public Duration getMax() {
            return max;
        }

        /** @param max the cap on any wait */
        public void setMax(Duration max) {
            this.max = max;
        }

        /** @return the random fraction */
        public double getJitter() {
            return jitter;
        }

        /** @param jitter the random fraction */
        public void setJitter(double jitter) {
            this.jitter = jitter;
        }
    }
}
