package io.dbtasks.internal.batch;

/**
 * The payload of a chunk task.
 *
 * @param batchId the batch
 * @param chunk the chunk's index
 */
public record ChunkPayload(long batchId, int chunk) {}
