package io.dbtasks;

import java.time.Instant;

/**
 * A snapshot of how the engine's database work is going, for a health check: when a statement the
 * engine issued last succeeded, how many have failed in a row since, and the last failure. A stall
 * (a statement or commit that took longer than {@link DbTasks.Builder#statementTimeout}) counts as
 * a failure. Times are this JVM's wall clock.
 *
 * @param lastSuccessAt when a unit of engine database work (claim, heartbeat, completion, rescue,
 *     query, ...) last succeeded; {@code null} if none has yet
 * @param consecutiveFailures units of work that failed since the last success; 0 when healthy
 * @param lastFailureAt when one last failed; {@code null} if none has
 * @param lastFailure what failed and why (the error message, a stall says so); {@code null} if none
 */
public record DbTasksHealth(Instant lastSuccessAt, int consecutiveFailures, Instant lastFailureAt, String lastFailure) {
    /** @return whether the last unit of database work succeeded (or none has failed yet) */
    public boolean healthy() {
        return consecutiveFailures == 0;
    }
}
