package io.dbtasks.internal.claim;

import java.util.concurrent.TimeUnit;

/**
 * How many tasks one queue's claim loop may claim before a slot frees for them: the size of its
 * claim-ahead buffer.
 *
 * <p>The buffer is sized so that a buffered task is expected to start within {@value
 * #HORIZON_MILLIS} ms: {@code slots x horizon / average handler time}, at most {@value #PER_SLOT}
 * tasks per slot or one claim batch, whichever is more. The average is an exponentially weighted mean
 * of the handler times seen (weight {@value #WEIGHT} for each new one); until one is seen, and
 * whenever tasks take longer than {@code horizon x slots}, the buffer is empty.
 *
 * <p>In a queue with limits a task claimed ahead is RUNNING and counts against its key's limit while
 * it waits for a slot, so it can hold back a task another engine could start. Each claim that left
 * due tasks behind a limit halves the buffer (to nothing within a few claims); each that left none
 * raises it by a quarter of the slots (at least one), until the handler times alone bound it again.
 * Halving and adding back slowly keeps the buffer near the largest size that does not hold tasks back.
 *
 * <p>Not thread-safe: the owning {@link QueueWorker} guards it with its own lock.
 */
final class ClaimAhead {
    static final long HORIZON_MILLIS = 10;
    static final double WEIGHT = 0.1;
    /**
     * At most this many tasks per slot wait claimed ahead (or one claim batch, if more): larger claims
     * mean fewer round trips per task, and they also shrink what an engine loses when its workers are
     * split over two processes. A loop with few slots may still claim a whole claim batch ahead (when
     * the horizon allows), since four per slot alone would keep its claims small. The measurements
     * behind these limits are in BENCHMARKS.md.
     */
    static final int PER_SLOT = 4;

    private static final double HORIZON_NANOS = TimeUnit.MILLISECONDS.toNanos(HORIZON_MILLIS);

    private final int slots;
    private final int claimBatch;
    private final boolean enabled;
    private double averageNanos = -1; // -1 until a handler time is seen
    private int withinLimits = Integer.MAX_VALUE; // MAX_VALUE: limits do not bind the buffer

    /**
     * @param slots how many of the queue's tasks run at once on this engine, at least 1
     * @param claimBatch the most tasks one claim takes, at least 1
     * @param enabled {@code false} keeps the buffer empty whatever the handler times
     */
    ClaimAhead(int slots, int claimBatch, boolean enabled) {
        this.slots = slots;
        this.claimBatch = claimBatch;
        this.enabled = enabled;
    }

    /** @return how many tasks may wait claimed ahead now, 0 or more */
    int size() {
        return Math.min(natural(), withinLimits);
    }

    /** @return the buffer's size as the handler times alone would have it, 0 or more */
    int natural() {
        if (averageNanos < 0 || !enabled) {
            return 0;
        }
        return (int) Math.min(
                Math.max((long) PER_SLOT * slots, claimBatch), slots * HORIZON_NANOS / Math.max(1, averageNanos));
    }

    /** A handler ran for {@code nanos} nanoseconds (0 or more): the average moves towards it. */
    void handlerRan(long nanos) {
        averageNanos = averageNanos < 0 ? nanos : averageNanos + WEIGHT * (nanos - averageNanos);
    }

    /**
     * A task waited {@code nanos} nanoseconds claimed ahead without a slot freeing: the average is
     * raised to at least that, so that nothing is claimed ahead until handlers are seen to speed up.
     */
    void waitedTooLong(long nanos) {
        averageNanos = Math.max(averageNanos, nanos);
    }

    /**
     * Adjusts the buffer after a claim.
     *
     * @param heldBack whether the claim left due tasks behind a limit
     */
    void afterClaim(boolean heldBack) {
        if (heldBack) {
            withinLimits = size() / 2;
        } else if (withinLimits != Integer.MAX_VALUE) {
            int raised = withinLimits + Math.max(1, slots / 4);
            withinLimits = raised >= natural() ? Integer.MAX_VALUE : raised;
        }
    }
}
