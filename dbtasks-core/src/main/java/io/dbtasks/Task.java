package io.dbtasks;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A snapshot of one task row. Immutable; re-read it with {@link DbTasks#find(long)} to see later
 * changes.
 *
 * @param id the task's id, assigned by the database
 * @param queue the queue the task waits in
 * @param kind the stable name its handler is registered under
 * @param status its state
 * @param priority higher runs first among due tasks of one queue
 * @param attempt the number of attempts started so far (0 before the first claim)
 * @param maxAttempts attempts allowed before the task is FAILED
 * @param idempotencyKey the unique key it was enqueued with, or {@code null}
 * @param name a display name, or {@code null}
 * @param reference a business reference (an order id, say), or {@code null}
 * @param payload the payload as JSON text, or {@code null} when the kind takes none
 * @param runAt when the task is (or was) due, by the database clock
 * @param leaseOwner the worker holding the lease while RUNNING, else {@code null}
 * @param fencingToken the fencing token of the current or last claim, or {@code null} before any
 * @param leaseExpiresAt when the current lease ends unless renewed, or {@code null}
 * @param cancelRequested whether an operator asked a RUNNING task to stop
 * @param createdAt when it was enqueued
 * @param updatedAt when the row last changed
 * @param startedAt when the current or last attempt started, or {@code null}
 * @param finishedAt when it reached a final state, or {@code null}
 * @param lastError a readable reason for the last failure, or {@code null}
 * @param traceParent the W3C {@code traceparent} of the span that enqueued it (see {@link
 *     TaskRequest#traceParent()}), or {@code null}
 * @param concurrencyKey the key concurrency limits count it by (see {@link
 *     TaskRequest#concurrencyKey()}), or {@code null}
 * @param workflowId the id of the workflow it is a step of (see {@link
 *     io.dbtasks.workflow.Workflows}), or {@code null} for a task outside workflows
 */
public record Task(
        long id,
        String queue,
        String kind,
        TaskStatus status,
        int priority,
        int attempt,
        int maxAttempts,
        @Nullable String idempotencyKey,
        @Nullable String name,
        @Nullable String reference,
        @Nullable String payload,
        Instant runAt,
        @Nullable String leaseOwner,
        @Nullable Long fencingToken,
        @Nullable Instant leaseExpiresAt,
        boolean cancelRequested,
        Instant createdAt,
        Instant updatedAt,
        @Nullable Instant startedAt,
        @Nullable Instant finishedAt,
        @Nullable String lastError,
        @Nullable String traceParent,
        @Nullable String concurrencyKey,
        @Nullable Long workflowId) {

    /**
     * A task without a concurrency key, outside workflows: {@code concurrencyKey} and {@code
     * workflowId} {@code null}; the parameters are the record's.
     *
     * @param id the task's id
     * @param queue its queue
     * @param kind its kind
     * @param status its state
     * @param priority its priority
     * @param attempt attempts started
     * @param maxAttempts attempts allowed
     * @param idempotencyKey its key, or {@code null}
     * @param name its display name, or {@code null}
     * @param reference its business reference, or {@code null}
     * @param payload its payload JSON, or {@code null}
     * @param runAt when it is due
     * @param leaseOwner the lease holder, or {@code null}
     * @param fencingToken the last claim's token, or {@code null}
     * @param leaseExpiresAt when the lease ends, or {@code null}
     * @param cancelRequested whether a cancel was asked
     * @param createdAt when it was enqueued
     * @param updatedAt when the row last changed
     * @param startedAt when the last attempt started, or {@code null}
     * @param finishedAt when it finished, or {@code null}
     * @param lastError the last failure's reason, or {@code null}
     * @param traceParent the enqueuing span's {@code traceparent}, or {@code null}
     */
    public Task(
            long id,
            String queue,
            String kind,
            TaskStatus status,
            int priority,
            int attempt,
            int maxAttempts,
            @Nullable String idempotencyKey,
            @Nullable String name,
            @Nullable String reference,
            @Nullable String payload,
            Instant runAt,
            @Nullable String leaseOwner,
            @Nullable Long fencingToken,
            @Nullable Instant leaseExpiresAt,
            boolean cancelRequested,
            Instant createdAt,
            Instant updatedAt,
            @Nullable Instant startedAt,
            @Nullable Instant finishedAt,
            @Nullable String lastError,
            @Nullable String traceParent) {
        this(
                id,
                queue,
                kind,
                status,
                priority,
                attempt,
                maxAttempts,
                idempotencyKey,
                name,
                reference,
                payload,
                runAt,
                leaseOwner,
                fencingToken,
                leaseExpiresAt,
                cancelRequested,
                createdAt,
                updatedAt,
                startedAt,
                finishedAt,
                lastError,
                traceParent,
                null,
                null);
    }
}
