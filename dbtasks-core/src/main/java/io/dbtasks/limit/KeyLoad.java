package io.dbtasks.limit;

import org.jspecify.annotations.Nullable;

/**
 * What one concurrency key of a queue has in flight, as of one read.
 *
 * @param queue the queue
 * @param key the concurrency key
 * @param running its tasks RUNNING now (a task whose worker died counts until it is rescued)
 * @param waiting its tasks PENDING (due or not)
 * @param limit the limit that applies to the key, or {@code null} if none does
 */
public record KeyLoad(
        String queue,
        String key,
        long running,
        long waiting,
        @Nullable Limit limit) {}
