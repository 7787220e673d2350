package io.dbtasks.internal.execution;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The executions one engine holds leases for, claimed ahead or running: the heartbeat renews them
 * and a stop waits for them. Thread-safe.
 */
public final class RunningSet {
    private final Set<Execution> executions = ConcurrentHashMap.newKeySet();

    public void add(Execution e) {
        executions.add(e);
    }

    /** @return whether {@code e} was tracked (each execution is removed once) */
    public boolean remove(Execution e) {
        if (executions.remove(e)) {
            synchronized (this) {
                notifyAll(); // a stop may be waiting for the last one
            }
            return true;
        }
        return false;
    }

    public int size() {
        return executions.size();
    }

    /** @return a snapshot, in no particular order */
    public List<Execution> snapshot() {
        return List.copyOf(executions);
    }

    /**
     * Waits until nothing is tracked or {@code deadlineNanos} (by {@link System#nanoTime()}) passes.
     * An interrupt ends the wait early and is kept.
     */
    public void awaitEmpty(long deadlineNanos) {
        synchronized (this) {
            while (!executions.isEmpty() && System.nanoTime() < deadlineNanos) {
                try {
                    wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime())));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
