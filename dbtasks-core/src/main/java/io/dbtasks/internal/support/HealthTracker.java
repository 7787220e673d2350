package io.dbtasks.internal.support;

import io.dbtasks.DbTasksHealth;
import java.time.Instant;

/**
 * Counts the outcomes of the engine's units of database work for {@link DbTasksHealth}.
 * Thread-safe: called from every engine thread.
 */
public final class HealthTracker {
    private Instant lastSuccessAt;
    private int consecutiveFailures;
    private Instant lastFailureAt;
    private String lastFailure;

    synchronized void success() {
        lastSuccessAt = Instant.now();
        consecutiveFailures = 0;
    }

    synchronized void failure(String message) {
        lastFailureAt = Instant.now();
        lastFailure = message;
        consecutiveFailures++;
    }

    synchronized DbTasksHealth snapshot() {
        return new DbTasksHealth(lastSuccessAt, consecutiveFailures, lastFailureAt, lastFailure);
    }
}
