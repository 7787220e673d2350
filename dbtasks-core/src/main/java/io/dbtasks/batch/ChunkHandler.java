package io.dbtasks.batch;

import java.sql.Connection;
import org.jspecify.annotations.Nullable;

/**
 * Does one chunk of a batch. Register it with {@link io.dbtasks.DbTasks.Builder#chunkHandler(String,
 * Class, ChunkHandler)}.
 *
 * <p>The handler writes its effects through {@code transaction}, which already holds the chunk's
 * done record and which the engine commits together with the chunk task's guarded completion: the
 * effects, the record and SUCCEEDED commit together or not at all, so a chunk's effects in this
 * database happen exactly once, however often the chunk is retried or taken over. Effects outside
 * the database (a call to another service) are at least once: make them idempotent, for example
 * keyed by batch id and chunk.
 *
 * <p>The handler must not commit, roll back or close the connection. Instances are called on many
 * threads at once and must be thread-safe.
 *
 * @param <P> the batch parameters' type, read from JSON by Jackson ({@link Void} for none)
 */
@FunctionalInterface
public interface ChunkHandler<P> {
    /**
     * Does the chunk's work.
     *
     * @param chunk which batch and chunk, and the task's context; never {@code null}
     * @param transaction the open transaction to write effects through; never {@code null}
     * @param params the batch's parameters; {@code null} only if the batch has none
     * @throws Exception to fail this attempt; the transaction rolls back and the chunk is retried
     *     per the batch's retry settings
     */
    void handle(ChunkContext chunk, Connection transaction, @Nullable P params) throws Exception;
}
