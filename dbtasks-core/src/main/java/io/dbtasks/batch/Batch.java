package io.dbtasks.batch;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A stored batch.
 *
 * @param id the batch's id
 * @param kind its chunk handler's name
 * @param name its display name, or {@code null}
 * @param idempotencyKey its unique key, or {@code null}
 * @param chunks the number of chunks
 * @param params the parameters as JSON text, or {@code null}
 * @param createdAt when it was created, by the database clock
 * @param duplicate {@code true} when {@link Batches#create} found a batch with the same key and
 *     created nothing
 */
public record Batch(
        long id,
        String kind,
        @Nullable String name,
        @Nullable String idempotencyKey,
        int chunks,
        @Nullable String params,
        Instant createdAt,
        boolean duplicate) {}
