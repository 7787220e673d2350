package io.dbtasks.internal.execution;

import io.dbtasks.Task;
import io.dbtasks.internal.lease.Leases;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's timed lease work, run on its scheduler: the heartbeat that renews the leases of the
 * tasks it holds (and tells an execution that lost its lease, or whose cancellation an operator
 * asked for), the rescue sweep of expired leases, and the long-running check. Each run catches its
 * own failure and is tried again at the next tick.
 */
public final class LeaseKeeper {
    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    private final RunningSet running;
    private final Leases leases;
    private final Duration heartbeatInterval;
    private final Duration rescueInterval;
    private final BooleanSupplier closed;
    private volatile java.time.Instant lastRescueAt;

    /**
     * @param running the executions whose leases the engine holds
     * @param leases the lease store
     * @param heartbeatInterval how often {@link #heartbeat} runs, for its log message
     * @param rescueInterval how often {@link #rescue} runs, for its log message
     * @param closed whether the engine is stopping, which ends a rescue backlog early
     */
    public LeaseKeeper(
            RunningSet running,
            Leases leases,
            Duration heartbeatInterval,
            Duration rescueInterval,
            BooleanSupplier closed) {
        this.running = running;
        this.leases = leases;
        this.heartbeatInterval = heartbeatInterval;
        this.rescueInterval = rescueInterval;
        this.closed = closed;
    }

    public void heartbeat() {
        try {
            // By fencing token, not task id: a stale and a current execution of one task may both be here.
            Map<Long, Execution> live = new HashMap<>();
            List<Task> tasks = new ArrayList<>();
            for (Execution e : running.snapshot()) {
                if (!e.isSettled()) {
                    live.put(e.task().fencingToken(), e);
                    tasks.add(e.task());
                }
            }
            for (Long lost : leases.heartbeat(tasks)) {
                live.get(lost).onLeaseLost();
            }
            for (Long token : leases.cancelRequested(tasks)) {
                Execution e = live.get(token);
                if (e != null) { // a cancel request reaches only the execution that holds the lease
                    e.onCancelRequested();
                }
            }
        } catch (RuntimeException e) {
            log.error("Heartbeat failed; will retry in {}", heartbeatInterval, e);
        }
    }

    public void rescue() {
        try {
            while (leases.rescueExpired() > 0 && !closed.getAsBoolean()) {
                // keep going while there is a backlog
            }
            lastRescueAt = java.time.Instant.now();
        } catch (RuntimeException e) {
            log.error("Rescue of expired leases failed; will retry in {}", rescueInterval, e);
        }
    }

    /** @return when a rescue sweep last completed, or {@code null} if none has */
    public java.time.Instant lastRescueAt() {
        return lastRescueAt;
    }

    /**
     * Publishes LONG_RUNNING for executions whose handler has run at least their threshold: by
     * kind, else by queue, else {@code threshold}; a zero threshold means never.
     */
    public void checkLongRunning(
            Duration threshold, java.util.Map<String, Duration> byKind, java.util.Map<String, Duration> byQueue) {
        for (Execution e : running.snapshot()) {
            Duration d = byKind.get(e.task().kind());
            if (d == null) {
                d = byQueue.getOrDefault(e.task().queue(), threshold);
            }
            if (!d.isZero()) {
                e.checkLongRunning(d.toNanos());
            }
        }
    }
}
