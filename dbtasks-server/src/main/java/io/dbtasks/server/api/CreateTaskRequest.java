package io.dbtasks.server.api;

import java.time.Instant;
import tools.jackson.databind.JsonNode;

/**
 * The body of {@code POST /api/tasks}. Only {@code kind} is required.
 *
 * @param kind the handler's kind; required
 * @param payload any JSON value, read as the kind's payload type; {@code null} or absent for none
 * @param queue the queue, or {@code null} for {@code default}
 * @param priority higher runs first among due tasks of a queue; {@code null} for 0
 * @param runAt when it becomes due (ISO-8601 instant), or {@code null} for now
 * @param maxAttempts attempts allowed, at least 1, or {@code null} for the engine default
 * @param idempotencyKey the task's unique key: posting the same kind and payload with it again returns
 *     the existing task (200); a different kind or payload is refused (422) unless
 *     {@code returnExisting} is true; or {@code null}
 * @param name a display name, or {@code null}
 * @param reference a business reference, or {@code null}
 * @param returnExisting true to get the existing task (200) when {@code idempotencyKey} is taken by a
 *     task of another kind or payload, instead of 422; {@code null} for false
 * @param concurrencyKey the key concurrency limits count the task by (a tenant, a customer; see
 *     {@code /api/limits}), or {@code null} for none
 */
public record CreateTaskRequest(
        String kind,
        JsonNode payload,
        String queue,
        Integer priority,
        Instant runAt,
        Integer maxAttempts,
        String idempotencyKey,
        String name,
        String reference,
        Boolean returnExisting,
        String concurrencyKey) {}
