package io.dbtasks;

import java.time.Instant;

/**
 * A task in a listing: everything an overview shows, without the payload ({@link
 * DbTasks#searchSummaries}).
 *
 * @param id the task id
 * @param queue its queue
 * @param kind its kind
 * @param status its state
 * @param attempt attempts started so far
 * @param maxAttempts attempts allowed
 * @param key its idempotency key, or {@code null}
 * @param reference its business reference, or {@code null}
 * @param runAt when it is or was due
 * @param createdAt when it was enqueued
 * @param finishedAt when it reached a final state, or {@code null}
 * @param lastError the last failure's message, or {@code null}
 * @param cancelRequested whether a cancel waits for its running handler
 * @param leaseOwner the worker that holds it, or {@code null}
 * @param concurrencyKey the key limits count it by, or {@code null}
 */
public record TaskSummary(
        long id,
        String queue,
        String kind,
        TaskStatus status,
        int attempt,
        int maxAttempts,
        String key,
        String reference,
        Instant runAt,
        Instant createdAt,
        Instant finishedAt,
        String lastError,
        boolean cancelRequested,
        String leaseOwner,
        String concurrencyKey) {}
