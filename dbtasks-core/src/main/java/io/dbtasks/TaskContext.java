package io.dbtasks;

import io.dbtasks.lock.LeaseLostException;

/**
 * What a running handler knows about its task and lease. One instance per attempt; its methods are
 * safe to call from any thread.
 */
public interface TaskContext {
    /**
     * @return the task's id
     */
    long taskId();

    /**
     * @return the task's kind
     */
    String kind();

    /**
     * @return the task's queue
     */
    String queue();

    /**
     * @return this attempt's number, starting at 1
     */
    int attempt();

    /**
     * @return the task's maximum number of attempts
     */
    int maxAttempts();

    /**
     * The fencing token of this claim: strictly greater than every token issued before it. Present it
     * to any other system the handler writes to so that a stale worker's writes can be refused.
     *
     * @return the token
     */
    long fencingToken();

    /**
     * @return the id of the worker running this attempt
     */
    String workerId();

    /**
     * Tells whether this worker has lost the lease (expiry, takeover, shutdown hand-back). Once
     * {@code true} it stays so, and the handler's result will be discarded.
     *
     * @return {@code true} if the lease is lost
     */
    boolean isLeaseLost();

    /**
     * Tells whether an operator has asked this task to stop. The engine also interrupts the handler.
     *
     * @return {@code true} if cancellation was requested
     */
    boolean isCancellationRequested();

    /**
     * Extends the lease now, in addition to the engine's periodic heartbeats. Useful before a long
     * step. One guarded UPDATE on the task's id, token and RUNNING state.
     *
     * @throws LeaseLostException if the lease is no longer this worker's
     * @throws DbTasksException if the database cannot be reached
     */
    void heartbeat();

    /**
     * @return the W3C {@code traceparent} stored with the task by the span that enqueued it, so the
     *     handler (or an integration around it) can continue that trace; {@code null} if none
     */
    default String traceParent() {
        return null;
    }

    /**
     * @return when this attempt was due (the task's run-at, by the database clock); {@code null}
     *     where not known
     */
    default java.time.Instant runAt() {
        return null;
    }
}
