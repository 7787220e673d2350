package io.dbtasks.batch;

import io.dbtasks.TaskContext;

/**
 * Which chunk a {@link ChunkHandler} is doing.
 *
 * @param batchId the batch's id
 * @param kind the batch's kind (the handler's name)
 * @param chunk the chunk's index, 0 to {@code chunks - 1}
 * @param chunks the number of chunks in the batch
 * @param task the chunk task's context: attempt, fencing token, lease
 */
public record ChunkContext(long batchId, String kind, int chunk, int chunks, TaskContext task) {}
