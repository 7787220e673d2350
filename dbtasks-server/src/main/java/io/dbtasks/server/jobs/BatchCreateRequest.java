package io.dbtasks.server.jobs;

import tools.jackson.databind.JsonNode;

/**
 * The body of {@code POST /api/batches}.
 *
 * @param kind the batch kind, one this server has a chunk handler for; required
 * @param chunks the number of chunks, 1 to 100,000; required
 * @param params the parameters every chunk reads, or {@code null}
 * @param name a display name, or {@code null}
 * @param idempotencyKey a unique key: posting it again returns the existing batch; or {@code null}
 * @param maxAttempts attempts per chunk, or {@code null} for the default
 */
public record BatchCreateRequest(
        String kind, Integer chunks, JsonNode params, String name, String idempotencyKey, Integer maxAttempts) {}
