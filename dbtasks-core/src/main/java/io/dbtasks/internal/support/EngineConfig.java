package io.dbtasks.internal.support;

import io.dbtasks.NonRetryableException;
import io.dbtasks.RetryPolicy;
import io.dbtasks.event.TaskEventListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.function.DoubleSupplier;

/**
 * The validated, immutable settings of one engine; built by {@code DbTasks.Builder}.
 *
 * <p>{@code listeners} receive the engine's events; {@code longRunningThreshold} is how long a
 * handler may run before a {@code LONG_RUNNING} event, {@link Duration#ZERO} for never; {@code
 * enqueueSignalInterval} is the least time between two cross-instance wake-ups of one queue that
 * enqueues send (see {@link io.dbtasks.internal.enqueue.EnqueueSignals}), {@link Duration#ZERO} for one per enqueue.
 */
public record EngineConfig(
        String workerId,
        Map<String, Integer> queues,
        ExecutorService executor,
        Duration lease,
        Duration heartbeatInterval,
        Duration pollInterval,
        Duration rescueInterval,
        Duration shutdownTimeout,
        int claimBatch,
        boolean claimAhead,
        int defaultMaxAttempts,
        RetryPolicy defaultRetryPolicy,
        Duration defaultTimeout,
        List<Class<? extends Throwable>> nonRetryable,
        DoubleSupplier random,
        Duration vacuumInterval,
        Duration statementTimeout,
        List<TaskEventListener> listeners,
        Duration longRunningThreshold,
        Duration enqueueSignalInterval) {

    /** @return whether a throwable ends its task without retry */
    public boolean isNonRetryable(Throwable t) {
        if (t instanceof Error || t instanceof NonRetryableException) {
            return true;
        }
        for (Class<? extends Throwable> type : nonRetryable) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /** @return {@code host:pid:random}, unique per engine, at most 200 characters (the column size) */
    public static String defaultWorkerId() {
        return io.dbtasks.lock.spi.WorkerIds.defaultWorkerId();
    }
}
