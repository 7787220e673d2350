package io.dbtasks;

import org.jspecify.annotations.Nullable;

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
     * @throws io.dbtasks.lock.LeaseLostException if the lease is no longer this worker's
     * @throws DbTasksException if the database cannot be reached
     */
    void heartbeat();

    /**
     * @return the W3C {@code traceparent} stored with the task by the span that enqueued it, so the
     *     handler (or an integration around it) can continue that trace; {@code null} if none
     */
    default @Nullable String traceParent() {
        return null;
    }

    /**
     * @return when this attempt was due (the task's run-at, by the database clock): a retry's or a
     *     rescue's time after the first attempt, so use {@link #slot()} for the period a schedule's
     *     task stands for; {@code null} where not known
     */
    default java.time.@Nullable Instant runAt() {
        return null;
    }

    /**
     * @return the idempotency key the task was enqueued with (for a schedule's task, its slot key
     *     {@code schedule:<name>@<slot>}); the same on every attempt, retry and rescue; empty if it has
     *     none
     */
    default java.util.Optional<String> idempotencyKey() {
        return java.util.Optional.empty();
    }

    /**
     * The slot a schedule's task stands for: the cron fire time or fixed-rate slot it was enqueued
     * for, also for a missed slot caught up later. Read from the slot key, so it is the same on every
     * attempt, retry and rescue, unlike {@link #runAt()}.
     *
     * @return the slot, or empty if the task is not a schedule's
     */
    default java.util.Optional<java.time.Instant> slot() {
        return idempotencyKey().flatMap(TaskContext::slotOfKey);
    }

    /**
     * The most characters a result may have ({@link #setResult}): 65,536. A result is meant for what
     * a dependent step needs (an id, a count, a small document); larger data belongs in the
     * application's own tables, with its key in the result.
     */
    int MAX_RESULT_CHARS = 65_536;

    /**
     * Sets the result stored with this task if the attempt succeeds: JSON text, by convention, that
     * the steps depending on it read with {@link #dependencyResults()}. Stored as given, in the
     * transaction that records the success (the handler's own, for a transactional handler); a
     * failed attempt stores none, and a later call replaces an earlier one. Call it from the
     * handler's thread before the handler returns.
     *
     * @param json the result, at most {@link #MAX_RESULT_CHARS} characters; {@code null} clears it
     * @throws IllegalArgumentException if {@code json} is longer than {@link #MAX_RESULT_CHARS}
     * @throws UnsupportedOperationException if this context stores no results (a test double)
     */
    default void setResult(@Nullable String json) {
        throw new UnsupportedOperationException("This TaskContext does not store results");
    }

    /**
     * @return the id of the workflow this task is a step of, or empty for a task outside workflows
     */
    default java.util.Optional<Long> workflowId() {
        return java.util.Optional.empty();
    }

    /**
     * The results of the steps this step depends on, read from the database when called (they all
     * finished before this step was released).
     *
     * @return step name to its stored result (JSON text, or {@code null} where it stored none), in
     *     no particular order; empty for a task outside workflows or a step without dependencies
     * @throws DbTasksException if the database fails
     */
    default java.util.Map<String, @Nullable String> dependencyResults() {
        return java.util.Map.of();
    }

    /**
     * One dependency's result: {@code dependencyResults().get(step)}.
     *
     * @param step the name of a step this step depends on
     * @return its result, or empty if it stored none or is not a dependency of this step
     * @throws DbTasksException if the database fails
     */
    default java.util.Optional<String> dependencyResult(String step) {
        return java.util.Optional.ofNullable(dependencyResults().get(step));
    }

    /**
     * Adds a step to this step's workflow (a fan-out): inserted only if this attempt succeeds, in the
     * transaction that records the success (the handler's own, for a transactional handler), and
     * claimable as soon as that commits. The steps named in {@code downstream} also wait for the new
     * step (a fan-in): each must be a WAITING step of this workflow that depends on this step, so it
     * cannot have been released before the new step exists. A failed attempt adds nothing; its retry
     * adds its steps anew.
     *
     * @param step the new step's name, unique in the workflow, 1 to 200 characters
     * @param request its task; without an idempotency key
     * @param downstream names of steps of this workflow that wait for the new step too
     * @throws IllegalArgumentException if the name is blank, too long or taken, the request has an
     *     idempotency key, or a downstream step is not a WAITING dependent of this step
     * @throws IllegalStateException if this task is not a workflow step
     * @throws UnsupportedOperationException if this context adds no steps (a test double)
     * @throws DbTasksException if the database fails while the names are checked
     */
    default void addStep(String step, TaskRequest request, String... downstream) {
        throw new UnsupportedOperationException("This TaskContext does not add workflow steps");
    }

    /**
     * The slot of a schedule's slot key, {@code schedule:<name>@<slot>}, as {@link
     * io.dbtasks.schedule.Schedule#slotOf} reads it. Repeated here rather than called there, as the
     * schedule package depends on this one and not the other way round; a test holds both to the same
     * answers.
     */
    private static java.util.Optional<java.time.Instant> slotOfKey(@Nullable String key) {
        String prefix = "schedule:";
        if (key == null || !key.startsWith(prefix)) {
            return java.util.Optional.empty();
        }
        int at = key.lastIndexOf('@');
        if (at < prefix.length()) {
            return java.util.Optional.empty();
        }
        try {
            return java.util.Optional.of(java.time.Instant.parse(key.substring(at + 1)));
        } catch (java.time.format.DateTimeParseException e) {
            return java.util.Optional.empty();
        }
    }
}
