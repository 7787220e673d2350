package io.dbtasks;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * How the engine runs a task, whatever produced it: a direct enqueue ({@link TaskRequest}), a
 * schedule's slot ({@code Schedule}), a job's run ({@code JobDefinition}) or a batch's chunks
 * ({@code BatchRequest}). Each producer holds one and exposes it as {@code options()}.
 *
 * <p>Every field is nullable, {@code null} meaning "the engine's default". The engine resolves an
 * unset field in one place when the task is enqueued, the same way for every producer: queue
 * {@value #DEFAULT_QUEUE}, priority {@value #DEFAULT_PRIORITY}, and the max attempts, retry policy
 * and timeout set on {@code DbTasks.Builder} ({@code defaultMaxAttempts}, {@code
 * defaultRetryPolicy}, {@code defaultTimeout}; {@value #DEFAULT_MAX_ATTEMPTS} attempts and {@link
 * RetryPolicy#DEFAULT} when the builder does not say, no timeout).
 *
 * <p>Immutable and thread-safe. Build one with {@link #builder()}, or copy one with a field changed
 * by the {@code with...} methods.
 *
 * @param queue the queue, 1 to {@value TaskRequest#MAX_NAME_LENGTH} characters, or {@code null} for
 *     {@value #DEFAULT_QUEUE}
 * @param priority higher runs first among due tasks of a queue; {@code null} for {@value
 *     #DEFAULT_PRIORITY}
 * @param maxAttempts attempts allowed, at least 1 (the first attempt counts), or {@code null} for
 *     the engine's default
 * @param retryPolicy the backoff between attempts, or {@code null} for the engine's default
 * @param timeout how long one attempt may run before it is interrupted and TIMED_OUT, positive, or
 *     {@code null} for the engine's default
 * @param concurrencyKey what concurrency and rate limits count the task by (a tenant, a customer,
 *     an API host), 1 to {@value TaskRequest#MAX_KEY_LENGTH} characters, or {@code null} for none: a
 *     task without a key is never held back by a limit (see {@code DbTasks.limits()})
 */
public record TaskOptions(
        @Nullable String queue,
        @Nullable Integer priority,
        @Nullable Integer maxAttempts,
        @Nullable RetryPolicy retryPolicy,
        @Nullable Duration timeout,
        @Nullable String concurrencyKey) {

    /** The queue of a task whose options name none. */
    public static final String DEFAULT_QUEUE = "default";

    /** The priority of a task whose options give none. */
    public static final int DEFAULT_PRIORITY = 0;

    /** The attempts a task gets when neither its options nor {@code DbTasks.Builder} say. */
    public static final int DEFAULT_MAX_ATTEMPTS = 3;

    /** Options with every field unset: each takes the engine's default. */
    public static final TaskOptions DEFAULTS = new TaskOptions(null, null, null, null, null, null);

    /**
     * @throws IllegalArgumentException if the queue is blank, longer than {@value
     *     TaskRequest#MAX_NAME_LENGTH} characters or holds what {@link StoredText} refuses, {@code
     *     maxAttempts < 1}, or the timeout is zero or negative
     */
    public TaskOptions {
        StoredText.requireName("queue", queue);
        if (queue != null && (queue.isBlank() || queue.length() > TaskRequest.MAX_NAME_LENGTH)) {
            throw new IllegalArgumentException("queue must be 1 to " + TaskRequest.MAX_NAME_LENGTH
                    + " characters and not blank, got '" + queue + "'");
        }
        if (maxAttempts != null && maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        if (timeout != null && (timeout.isZero() || timeout.isNegative())) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        TaskRequest.checkConcurrencyKey(concurrencyKey);
    }

    /**
     * Options without a concurrency key.
     *
     * @param queue as {@link TaskOptions}
     * @param priority as {@link TaskOptions}
     * @param maxAttempts as {@link TaskOptions}
     * @param retryPolicy as {@link TaskOptions}
     * @param timeout as {@link TaskOptions}
     * @throws IllegalArgumentException as {@link TaskOptions}
     */
    public TaskOptions(
            @Nullable String queue,
            @Nullable Integer priority,
            @Nullable Integer maxAttempts,
            @Nullable RetryPolicy retryPolicy,
            @Nullable Duration timeout) {
        this(queue, priority, maxAttempts, retryPolicy, timeout, null);
    }

    /** @return a builder with every field unset */
    public static Builder builder() {
        return new Builder(DEFAULTS);
    }

    /** @return a builder holding these options, to change some */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * @param queue the queue, or {@code null} for the default
     * @return a copy with {@code queue}
     * @throws IllegalArgumentException if the queue is out of range
     */
    public TaskOptions withQueue(@Nullable String queue) {
        return new TaskOptions(queue, priority, maxAttempts, retryPolicy, timeout, concurrencyKey);
    }

    /**
     * @param priority higher runs first, or {@code null} for the default
     * @return a copy with {@code priority}
     */
    public TaskOptions withPriority(@Nullable Integer priority) {
        return new TaskOptions(queue, priority, maxAttempts, retryPolicy, timeout, concurrencyKey);
    }

    /**
     * @param maxAttempts at least 1, or {@code null} for the engine's default
     * @return a copy with {@code maxAttempts}
     * @throws IllegalArgumentException if {@code maxAttempts < 1}
     */
    public TaskOptions withMaxAttempts(@Nullable Integer maxAttempts) {
        return new TaskOptions(queue, priority, maxAttempts, retryPolicy, timeout, concurrencyKey);
    }

    /**
     * @param retryPolicy the backoff, or {@code null} for the engine's default
     * @return a copy with {@code retryPolicy}
     */
    public TaskOptions withRetryPolicy(@Nullable RetryPolicy retryPolicy) {
        return new TaskOptions(queue, priority, maxAttempts, retryPolicy, timeout, concurrencyKey);
    }

    /**
     * @param timeout per attempt, positive, or {@code null} for the engine's default
     * @return a copy with {@code timeout}
     * @throws IllegalArgumentException if the timeout is zero or negative
     */
    public TaskOptions withTimeout(@Nullable Duration timeout) {
        return new TaskOptions(queue, priority, maxAttempts, retryPolicy, timeout, concurrencyKey);
    }

    /**
     * @param concurrencyKey the key limits count the task by, or {@code null} for none
     * @return a copy of these options with that key
     * @throws IllegalArgumentException if the key is blank or too long
     */
    public TaskOptions withConcurrencyKey(@Nullable String concurrencyKey) {
        return new TaskOptions(queue, priority, maxAttempts, retryPolicy, timeout, concurrencyKey);
    }

    /** Builds {@link TaskOptions}. Not thread-safe. */
    public static final class Builder {
        private @Nullable String queue;
        private @Nullable Integer priority;
        private @Nullable Integer maxAttempts;
        private @Nullable RetryPolicy retryPolicy;
        private @Nullable Duration timeout;
        private @Nullable String concurrencyKey;

        private Builder(TaskOptions from) {
            this.queue = from.queue;
            this.priority = from.priority;
            this.maxAttempts = from.maxAttempts;
            this.retryPolicy = from.retryPolicy;
            this.timeout = from.timeout;
            this.concurrencyKey = from.concurrencyKey;
        }

        /**
         * @param queue the queue, or {@code null} for the default
         * @return this
         */
        public Builder queue(@Nullable String queue) {
            this.queue = queue;
            return this;
        }

        /**
         * @param priority higher runs first, or {@code null} for the default
         * @return this
         */
        public Builder priority(@Nullable Integer priority) {
            this.priority = priority;
            return this;
        }

        /**
         * @param maxAttempts at least 1, or {@code null} for the engine's default
         * @return this
         */
        public Builder maxAttempts(@Nullable Integer maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * @param retryPolicy the backoff, or {@code null} for the engine's default
         * @return this
         */
        public Builder retryPolicy(@Nullable RetryPolicy retryPolicy) {
            this.retryPolicy = retryPolicy;
            return this;
        }

        /**
         * @param timeout per attempt, positive, or {@code null} for the engine's default
         * @return this
         */
        public Builder timeout(@Nullable Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * @param concurrencyKey the key limits count the task by, or {@code null} for none
         * @return this
         */
        public Builder concurrencyKey(@Nullable String concurrencyKey) {
            this.concurrencyKey = concurrencyKey;
            return this;
        }

        /**
         * @return the options
         * @throws IllegalArgumentException if a field is out of range (see {@link TaskOptions})
         */
        public TaskOptions build() {
            return new TaskOptions(queue, priority, maxAttempts, retryPolicy, timeout, concurrencyKey);
        }
    }
}
