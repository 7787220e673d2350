package io.dbtasks;

/** How one attempt at a task ended; one {@link Attempt} row is written per attempt. */
public enum AttemptOutcome {
    /** The handler returned normally and the completion was recorded under the attempt's lease. */
    SUCCEEDED,
    /** The handler threw; the task was retried or, out of attempts, marked FAILED. */
    FAILED,
    /** The handler ran longer than the task's timeout and was interrupted. */
    TIMED_OUT,
    /** The worker's lease expired (crash, pause, lost connection) and the task was rescued. */
    LEASE_EXPIRED,
    /** An operator cancelled the task while it ran and the handler was interrupted. */
    CANCELLED
}
