package io.dbtasks;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A snapshot of how the engine is doing, for a health check: when a statement the engine issued
 * last succeeded, how many have failed in a row since, and the last failure; whether its claim loops
 * run and go round; when its rescue sweep last completed; and, on PostgreSQL, whether its LISTEN
 * connection is up. A stall (a statement or commit that took longer than {@link
 * DbTasks.Builder#statementTimeout}) counts as a failure. Times are this JVM's wall clock.
 *
 * <p>Enqueueing and claiming are watched apart from every other unit of work, so that no other
 * success (a worker row written, a pause check read) hides them: {@link #unavailable} says why one
 * of them does not work now, when it failed on the database last time (for up to 30 s if it is not
 * called again) or a call of it has waited on the database for over a second (a lock on the task
 * table, an exhausted pool, a silent network), and while an engine built during an outage has not
 * reached its database yet.
 *
 * @param lastSuccessAt when a unit of engine database work (claim, heartbeat, completion, rescue,
 *     query, ...) last succeeded; {@code null} if none has yet
 * @param consecutiveFailures units of work that failed since the last success; 0 when healthy
 * @param lastFailureAt when one last failed; {@code null} if none has
 * @param lastFailure what failed and why (the error message, a stall says so); {@code null} if none
 * @param workersStarted whether the engine was started with workers and not stopped; {@code false}
 *     for a producer-only engine
 * @param claimLoops how many claim loops the engine runs (one or two per queue); 0 without workers
 * @param claimLoopsAlive how many of them have a live thread
 * @param oldestClaimLoopAt when the claim loop that went round least recently last did so (each
 *     loop goes round at least every poll interval while it waits, and after each claim); {@code
 *     null} without workers or before every loop went round once
 * @param lastRescueAt when the rescue sweep of expired leases last completed; {@code null} if none
 *     has (or without workers)
 * @param listening on PostgreSQL with workers, whether the LISTEN connection is up now; {@code null}
 *     where the engine does not listen (other databases, a declared transaction pooler, no workers)
 * @param unavailable why enqueueing or claiming does not work now; {@code null} when both do
 */
public record DbTasksHealth(
        @Nullable Instant lastSuccessAt,
        int consecutiveFailures,
        @Nullable Instant lastFailureAt,
        @Nullable String lastFailure,
        boolean workersStarted,
        int claimLoops,
        int claimLoopsAlive,
        @Nullable Instant oldestClaimLoopAt,
        @Nullable Instant lastRescueAt,
        @Nullable Boolean listening,
        @Nullable String unavailable) {

    /**
     * Without {@link #unavailable}: enqueueing and claiming work.
     *
     * @param lastSuccessAt see the record
     * @param consecutiveFailures see the record
     * @param lastFailureAt see the record
     * @param lastFailure see the record
     * @param workersStarted see the record
     * @param claimLoops see the record
     * @param claimLoopsAlive see the record
     * @param oldestClaimLoopAt see the record
     * @param lastRescueAt see the record
     * @param listening see the record
     */
    public DbTasksHealth(
            @Nullable Instant lastSuccessAt,
            int consecutiveFailures,
            @Nullable Instant lastFailureAt,
            @Nullable String lastFailure,
            boolean workersStarted,
            int claimLoops,
            int claimLoopsAlive,
            @Nullable Instant oldestClaimLoopAt,
            @Nullable Instant lastRescueAt,
            @Nullable Boolean listening) {
        this(
                lastSuccessAt,
                consecutiveFailures,
                lastFailureAt,
                lastFailure,
                workersStarted,
                claimLoops,
                claimLoopsAlive,
                oldestClaimLoopAt,
                lastRescueAt,
                listening,
                null);
    }

    /**
     * The database part only, for an engine without workers.
     *
     * @param lastSuccessAt see the record
     * @param consecutiveFailures see the record
     * @param lastFailureAt see the record
     * @param lastFailure see the record
     */
    public DbTasksHealth(
            @Nullable Instant lastSuccessAt,
            int consecutiveFailures,
            @Nullable Instant lastFailureAt,
            @Nullable String lastFailure) {
        this(lastSuccessAt, consecutiveFailures, lastFailureAt, lastFailure, false, 0, 0, null, null, null, null);
    }

    /**
     * @return whether the last unit of database work succeeded (or none has failed yet), and
     *     enqueueing and claiming work ({@link #unavailable} is {@code null})
     */
    public boolean healthy() {
        return consecutiveFailures == 0 && unavailable == null;
    }
}
