package io.dbtasks.server.jobs;

import io.dbtasks.batch.Batch;
import io.dbtasks.batch.BatchProgress;
import java.time.Instant;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A batch and its progress. {@code done + failed + running + waiting = chunks}.
 *
 * @param id the batch id
 * @param kind its kind
 * @param name its display name, or {@code null}
 * @param idempotencyKey its key, or {@code null}
 * @param chunks the number of chunks
 * @param params its parameters, or {@code null} (none, or hidden from the caller: {@code paramsOmitted})
 * @param createdAt when it was created
 * @param done chunks done
 * @param failed chunks whose task FAILED or was CANCELLED
 * @param running chunks running now
 * @param waiting chunks waiting to run or to retry
 * @param remaining running plus waiting
 * @param finished whether no chunk remains
 * @param rescuePending of the running chunks, those whose lease expired (their instance stopped);
 *     the next rescue returns them to waiting
 * @param paramsOmitted whether {@code params} is {@code null} because the caller may not see payloads
 *     ({@code dbtasks.server.security.hide-payloads-from-viewers}); false when there are none
 */
public record BatchResponse(
        long id,
        String kind,
        String name,
        String idempotencyKey,
        int chunks,
        JsonNode params,
        Instant createdAt,
        int done,
        int failed,
        int running,
        int waiting,
        int remaining,
        boolean finished,
        int rescuePending,
        boolean paramsOmitted) {

    /**
     * @param b the batch
     * @param p its progress
     * @param mapper parses the stored parameters
     * @param showParams false to leave the parameters out ({@code null}), for a caller who may not
     *     see payloads
     * @return the response
     */
    static BatchResponse of(Batch b, BatchProgress p, JsonMapper mapper, boolean showParams) {
        boolean omitted = b.params() != null && !showParams;
        return new BatchResponse(
                b.id(),
                b.kind(),
                b.name(),
                b.idempotencyKey(),
                b.chunks(),
                b.params() == null || omitted ? null : mapper.readTree(b.params()),
                b.createdAt(),
                p.done(),
                p.failed(),
                p.running(),
                p.waiting(),
                p.remaining(),
                p.finished(),
                p.rescuePending(),
                omitted);
    }
}
