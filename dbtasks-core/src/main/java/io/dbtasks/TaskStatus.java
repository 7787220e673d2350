package io.dbtasks;

/**
 * The life-cycle states of a task, stored as readable text with a CHECK constraint.
 *
 * <p>Transitions (each one guarded UPDATE whose row count is checked): {@code PENDING → RUNNING}
 * (claim); {@code RUNNING → SUCCEEDED}; {@code RUNNING → PENDING} (retry with backoff, rescue, or
 * hand-back on shutdown); {@code RUNNING → FAILED}; {@code PENDING → CANCELLED}; {@code RUNNING →
 * CANCELLED} (cooperative); {@code FAILED, CANCELLED → PENDING} (manual retry). A workflow step
 * with dependencies starts {@code WAITING}: {@code WAITING → PENDING} in the transaction that
 * settles its last dependency, {@code WAITING → CANCELLED} when a dependency fails for good or is
 * cancelled (or an operator cancels it), and {@code CANCELLED → WAITING} when the dependency that
 * cancelled it is retried.
 */
public enum TaskStatus {
    /**
     * A workflow step waiting for its dependencies to succeed; not claimable. Moves to PENDING in the
     * transaction that settles its last dependency.
     */
    WAITING,
    /** Waiting for its {@code run_at}, including a retry waiting out its backoff. */
    PENDING,
    /** Claimed by a worker that holds its lease. */
    RUNNING,
    /** Finished successfully; terminal. */
    SUCCEEDED,
    /** Out of attempts, or failed with a non-retryable error; may be retried by an operator. */
    FAILED,
    /** Cancelled before or while running; may be retried by an operator. */
    CANCELLED;

    /**
     * Tells whether no worker will touch a task in this state again without an operator.
     *
     * @return {@code true} for SUCCEEDED, FAILED and CANCELLED
     */
    public boolean isFinal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED;
    }
}
