package io.dbtasks.batch;

import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskOptions;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A batch to create. Build one with {@link #builder(String, int)}.
 *
 * @param kind the chunk handler's name, as registered with {@link
 *     io.dbtasks.DbTasks.Builder#chunkHandler(String, Class, ChunkHandler)}
 * @param chunks the number of chunks, 1 to {@value #MAX_CHUNKS}
 * @param params the parameters every chunk reads, written as JSON; {@code null} for none
 * @param name a display name, or {@code null}
 * @param idempotencyKey a unique key: creating a batch with it again returns the existing batch;
 *     or {@code null}
 * @param queue the queue of the chunk tasks, or {@code null} for the default
 * @param maxAttempts attempts per chunk, or {@code null} for the engine default
 * @param retryPolicy backoff between a chunk's attempts, or {@code null} for the engine default
 * @param priority the chunk tasks' priority, higher first, or {@code null} for the default
 * @param timeout how long one attempt of a chunk may run, positive, or {@code null} for the engine
 *     default
 * @param onFinish a callback task enqueued once when every chunk has ended (SUCCEEDED, FAILED or
 *     CANCELLED), or {@code null}
 * @param onSuccess a callback task enqueued once when every chunk has SUCCEEDED, or {@code null}
 * @param onFailure a callback task enqueued once when every chunk has ended and one of them FAILED or
 *     was CANCELLED, or {@code null}
 */
public record BatchRequest(
        String kind,
        int chunks,
        @Nullable Object params,
        @Nullable String name,
        @Nullable String idempotencyKey,
        @Nullable String queue,
        @Nullable Integer maxAttempts,
        @Nullable RetryPolicy retryPolicy,
        @Nullable Integer priority,
        @Nullable Duration timeout,
        io.dbtasks.@Nullable TaskRequest onFinish,
        io.dbtasks.@Nullable TaskRequest onSuccess,
        io.dbtasks.@Nullable TaskRequest onFailure) {
    /** The most chunks a batch may have. */
    public static final int MAX_CHUNKS = 100_000;

    /**
     * @throws NullPointerException if {@code kind} is {@code null}
     * @throws IllegalArgumentException if a field is out of range, or text holds what {@link
     *     io.dbtasks.StoredText} refuses (NUL, a lone surrogate; a control character in the kind or
     *     queue)
     */
    public BatchRequest {
        Objects.requireNonNull(kind, "kind");
        io.dbtasks.StoredText.requireName("kind", kind);
        io.dbtasks.StoredText.requireText("name", name);
        io.dbtasks.StoredText.requireText("idempotencyKey", idempotencyKey);
        io.dbtasks.StoredText.requireName("queue", queue);
        if (kind.isBlank() || kind.length() > 180) {
            throw new IllegalArgumentException("kind must be 1 to 180 characters and not blank: '" + kind + "'");
        }
        if (chunks < 1 || chunks > MAX_CHUNKS) {
            throw new IllegalArgumentException("chunks must be 1 to " + MAX_CHUNKS + ", got " + chunks);
        }
        if (name != null && name.length() > 200) {
            throw new IllegalArgumentException("name must be at most 200 characters");
        }
        if (idempotencyKey != null && (idempotencyKey.isBlank() || idempotencyKey.length() > 255)) {
            throw new IllegalArgumentException("idempotencyKey must be 1 to 255 characters and not blank");
        }
        new TaskOptions(queue, priority, maxAttempts, retryPolicy, timeout); // checks the options' ranges
        for (io.dbtasks.TaskRequest callback : new io.dbtasks.TaskRequest[] {onFinish, onSuccess, onFailure}) {
            if (callback != null && callback.idempotencyKey() != null) {
                throw new IllegalArgumentException("A batch callback takes no idempotency key: it is enqueued"
                        + " exactly once with the batch's last chunk; got '" + callback.idempotencyKey() + "'");
            }
        }
    }

    /**
     * A request without callbacks.
     *
     * @param kind the chunk handler's name
     * @param chunks the number of chunks
     * @param params the parameters, or {@code null}
     * @param name a display name, or {@code null}
     * @param idempotencyKey a unique key, or {@code null}
     * @param queue the chunk tasks' queue, or {@code null} for the default
     * @param maxAttempts attempts per chunk, or {@code null} for the engine default
     * @param retryPolicy backoff between a chunk's attempts, or {@code null} for the engine default
     * @param priority the chunk tasks' priority, or {@code null} for the default
     * @param timeout how long one attempt of a chunk may run, or {@code null} for the engine default
     * @throws IllegalArgumentException if a field is out of range
     */
    public BatchRequest(
            String kind,
            int chunks,
            @Nullable Object params,
            @Nullable String name,
            @Nullable String idempotencyKey,
            @Nullable String queue,
            @Nullable Integer maxAttempts,
            @Nullable RetryPolicy retryPolicy,
            @Nullable Integer priority,
            @Nullable Duration timeout) {
        this(
                kind,
                chunks,
                params,
                name,
                idempotencyKey,
                queue,
                maxAttempts,
                retryPolicy,
                priority,
                timeout,
                null,
                null,
                null);
    }

    /** @return whether the batch names a callback */
    public boolean hasCallbacks() {
        return onFinish != null || onSuccess != null || onFailure != null;
    }

    /**
     * A request whose chunk tasks take the default priority and timeout.
     *
     * @param kind the chunk handler's name
     * @param chunks the number of chunks
     * @param params the parameters, or {@code null}
     * @param name a display name, or {@code null}
     * @param idempotencyKey a unique key, or {@code null}
     * @param queue the chunk tasks' queue, or {@code null} for the default
     * @param maxAttempts attempts per chunk, or {@code null} for the engine default
     * @param retryPolicy backoff between a chunk's attempts, or {@code null} for the engine default
     * @throws IllegalArgumentException if a field is out of range
     */
    public BatchRequest(
            String kind,
            int chunks,
            @Nullable Object params,
            @Nullable String name,
            @Nullable String idempotencyKey,
            @Nullable String queue,
            @Nullable Integer maxAttempts,
            @Nullable RetryPolicy retryPolicy) {
        this(kind, chunks, params, name, idempotencyKey, queue, maxAttempts, retryPolicy, null, null, null, null, null);
    }

    /**
     * @return the options of every chunk task: queue, priority, max attempts, retry policy and
     *     timeout, each {@code null} for the engine's default
     */
    public TaskOptions options() {
        return new TaskOptions(queue, priority, maxAttempts, retryPolicy, timeout);
    }

    /**
     * @param kind the chunk handler's name
     * @param chunks the number of chunks
     * @return a builder
     */
    public static Builder builder(String kind, int chunks) {
        return new Builder(kind, chunks);
    }

    /** Builds a {@link BatchRequest}. Not thread-safe. */
    public static final class Builder {
        private final String kind;
        private final int chunks;
        private @Nullable Object params;
        private @Nullable String name;
        private @Nullable String idempotencyKey;
        private TaskOptions options = TaskOptions.DEFAULTS;
        private io.dbtasks.@Nullable TaskRequest onFinish;
        private io.dbtasks.@Nullable TaskRequest onSuccess;
        private io.dbtasks.@Nullable TaskRequest onFailure;

        private Builder(String kind, int chunks) {
            this.kind = kind;
            this.chunks = chunks;
        }

        /**
         * Sets the chunk tasks' queue, priority, max attempts, retry policy and timeout at once; a
         * field unset in {@code options} takes the engine's default.
         *
         * @param options the options
         * @return this
         * @throws NullPointerException if {@code options} is {@code null}
         */
        public Builder options(TaskOptions options) {
            this.options = Objects.requireNonNull(options, "options");
            return this;
        }

        /**
         * @param params the parameters, written as JSON
         * @return this
         */
        public Builder params(Object params) {
            this.params = params;
            return this;
        }

        /**
         * @param name a display name
         * @return this
         */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * @param key a unique key for the batch
         * @return this
         */
        public Builder idempotencyKey(String key) {
            this.idempotencyKey = key;
            return this;
        }

        /**
         * @param queue the chunk tasks' queue
         * @return this
         */
        public Builder queue(String queue) {
            this.options = options.withQueue(queue);
            return this;
        }

        /**
         * @param maxAttempts attempts per chunk
         * @return this
         */
        public Builder maxAttempts(int maxAttempts) {
            this.options = options.withMaxAttempts(maxAttempts);
            return this;
        }

        /**
         * @param retryPolicy backoff between a chunk's attempts
         * @return this
         */
        public Builder retryPolicy(RetryPolicy retryPolicy) {
            this.options = options.withRetryPolicy(retryPolicy);
            return this;
        }

        /**
         * Names a task to enqueue once when every chunk has ended, whatever the outcome: made
         * claimable in the transaction that settles the last chunk.
         *
         * @param callback the callback task; without an idempotency key
         * @return this
         */
        public Builder onFinish(io.dbtasks.TaskRequest callback) {
            this.onFinish = Objects.requireNonNull(callback, "callback");
            return this;
        }

        /**
         * Names a task to enqueue once when every chunk has SUCCEEDED; if a chunk fails for good or is
         * cancelled, the callback is cancelled with the reason instead (and enqueued after all if that
         * chunk is retried and the batch then succeeds).
         *
         * @param callback the callback task; without an idempotency key
         * @return this
         */
        public Builder onSuccess(io.dbtasks.TaskRequest callback) {
            this.onSuccess = Objects.requireNonNull(callback, "callback");
            return this;
        }

        /**
         * Names a task to enqueue once when every chunk has ended and one of them FAILED or was
         * CANCELLED; cancelled if every chunk succeeded.
         *
         * @param callback the callback task; without an idempotency key
         * @return this
         */
        public Builder onFailure(io.dbtasks.TaskRequest callback) {
            this.onFailure = Objects.requireNonNull(callback, "callback");
            return this;
        }

        /**
         * @return the request
         * @throws IllegalArgumentException if a field is out of range
         */
        public BatchRequest build() {
            return new BatchRequest(
                    kind,
                    chunks,
                    params,
                    name,
                    idempotencyKey,
                    options.queue(),
                    options.maxAttempts(),
                    options.retryPolicy(),
                    options.priority(),
                    options.timeout(),
                    onFinish,
                    onSuccess,
                    onFailure);
        }
    }
}
