package io.dbtasks.batch;

import io.dbtasks.DbTasksException;
import io.dbtasks.InvalidPayloadException;
import java.util.Optional;

/**
 * Chunked batches in the engine's database ({@code dbtasks_batch}, {@code dbtasks_batch_chunk}).
 *
 * <p>Creating a batch of N chunks writes the batch row, enqueues one task per chunk (kind {@code
 * dbtasks.batch:<kind>}, payload the batch id and chunk index) and writes one chunk row per task,
 * all in one transaction. One task per chunk, rather than claimable chunk ranges, because the tasks
 * already have everything a chunk needs: claiming with {@code SKIP LOCKED} lets every worker of every
 * instance take chunks in parallel, leases and rescue resume the chunks of a crashed instance,
 * attempts and backoff retry a failing chunk, and the attempt history shows each chunk's tries.
 *
 * <p>A chunk task runs in one transaction: a guarded {@code UPDATE} sets its chunk row's {@code
 * done_at} where it is still null, the {@link ChunkHandler} writes its effects, and the task's
 * guarded completion commits with them. If the row was done already (the chunk committed before),
 * the handler is skipped. A crash or lost lease rolls the whole transaction back, so a chunk is done
 * exactly once and a restart resumes with the chunks not yet done.
 *
 * <p>Thread-safe.
 */
public interface Batches {
    /** The prefix of chunk task kinds: {@code dbtasks.batch:<kind>}. */
    String KIND_PREFIX = "dbtasks.batch:";

    /**
     * Creates a batch and enqueues its chunks.
     *
     * @param request the batch
     * @return the batch; with an idempotency key that exists already, that batch marked duplicate
     * @throws InvalidPayloadException if the parameters cannot be written as JSON
     * @throws DbTasksException if the database fails; nothing is stored
     */
    Batch create(BatchRequest request);

    /**
     * @param id a batch id
     * @return the batch, or empty
     * @throws DbTasksException if the database fails
     */
    Optional<Batch> find(long id);

    /**
     * Counts the batch's chunks by state, in one query.
     *
     * @param id a batch id
     * @return the progress
     * @throws BatchNotFoundException if there is no such batch
     * @throws DbTasksException if the database fails
     */
    BatchProgress progress(long id);

    /**
     * Sends the batch's FAILED and CANCELLED chunk tasks back to PENDING, with one more attempt each.
     *
     * @param id a batch id
     * @return how many chunks were sent back
     * @throws BatchNotFoundException if there is no such batch
     * @throws DbTasksException if the database fails
     */
    int retryFailed(long id);
}
