package io.dbtasks.server.api;

import io.dbtasks.Task;
import io.dbtasks.TaskStatus;
import java.time.Instant;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A task as the API shows it: {@link Task} with the payload embedded as JSON rather than as text.
 * Instants are written as ISO-8601 strings.
 *
 * @param id the task id
 * @param kind the handler's kind
 * @param queue the queue
 * @param status the state
 * @param priority the priority
 * @param attempt attempts started so far
 * @param maxAttempts attempts allowed
 * @param idempotencyKey the key, or {@code null}
 * @param name the display name, or {@code null}
 * @param reference the business reference, or {@code null}
 * @param payload the payload, or {@code null}
 * @param runAt when it is (or was) due
 * @param createdAt when it was enqueued
 * @param updatedAt when it last changed
 * @param startedAt when the current or last attempt started, or {@code null}
 * @param finishedAt when it reached a final state, or {@code null}
 * @param lastError the reason of the last failure, or {@code null}
 * @param leaseOwner the worker of the current or last claim, or {@code null}
 * @param fencingToken the fencing token of the current or last claim, or {@code null}
 * @param leaseExpiresAt when the current lease ends, or {@code null}
 * @param cancelRequested whether cancellation of a running task was asked for
 * @param payloadOmitted whether {@code payload} is {@code null} because it was left out: hidden from
 *     a viewer, or too long for a list without {@code include=payload}
 * @param concurrencyKey the key concurrency limits count it by, or {@code null}
 * @param waitReason why a PENDING task is held back by its key's limit, such as {@code waiting for
 *     limit of key k: 3/3 running}; {@code null} when it is not, and in lists (the single-task view
 *     reads it)
 */
public record TaskResponse(
        long id,
        String kind,
        String queue,
        TaskStatus status,
        int priority,
        int attempt,
        int maxAttempts,
        String idempotencyKey,
        String name,
        String reference,
        JsonNode payload,
        Instant runAt,
        Instant createdAt,
        Instant updatedAt,
        Instant startedAt,
        Instant finishedAt,
        String lastError,
        String leaseOwner,
        Long fencingToken,
        Instant leaseExpiresAt,
        boolean cancelRequested,
        boolean payloadOmitted,
        String concurrencyKey,
        String waitReason) {

    /**
     * @param reason why the task is held back by a limit, or {@code null}
     * @return this response with that reason
     */
    TaskResponse withWaitReason(String reason) {
        return new TaskResponse(
                id,
                kind,
                queue,
                status,
                priority,
                attempt,
                maxAttempts,
                idempotencyKey,
                name,
                reference,
                payload,
                runAt,
                createdAt,
                updatedAt,
                startedAt,
                finishedAt,
                lastError,
                leaseOwner,
                fencingToken,
                leaseExpiresAt,
                cancelRequested,
                payloadOmitted,
                concurrencyKey,
                reason);
    }

    /**
     * @param task the task
     * @param mapper parses the stored payload text
     * @param showPayload false to leave the payload out ({@code null}), for a viewer who may not see it
     * @param payloadLimit the longest payload shown, in characters of JSON; longer ones are left out
     * @return the response
     */
    static TaskResponse of(Task task, JsonMapper mapper, boolean showPayload, int payloadLimit) {
        boolean omitted =
                task.payload() != null && (!showPayload || task.payload().length() > payloadLimit);
        return new TaskResponse(
                task.id(),
                task.kind(),
                task.queue(),
                task.status(),
                task.priority(),
                task.attempt(),
                task.maxAttempts(),
                task.idempotencyKey(),
                task.name(),
                task.reference(),
                task.payload() == null || omitted ? null : mapper.readTree(task.payload()),
                task.runAt(),
                task.createdAt(),
                task.updatedAt(),
                task.startedAt(),
                task.finishedAt(),
                task.lastError(),
                task.leaseOwner(),
                task.fencingToken(),
                task.leaseExpiresAt(),
                task.cancelRequested(),
                omitted,
                task.concurrencyKey(),
                null);
    }
}
