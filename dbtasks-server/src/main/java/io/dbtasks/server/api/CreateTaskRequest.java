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
 * @param idempotencyKey a unique key: posting it again returns the existing task; or {@code null}
 * @param name a display name, or {@code null}
 * @param reference a business reference, or {@code null}
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
        String reference) {}
