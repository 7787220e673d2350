package io.dbtasks.internal.enqueue;

import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskOptions;
import io.dbtasks.internal.support.EngineConfig;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The one place where a task's unset {@link TaskOptions} take the engine's defaults, used at enqueue
 * for every producer (direct enqueues, schedule slots, job runs, batch chunks): the queue {@value
 * TaskOptions#DEFAULT_QUEUE}, the priority {@value TaskOptions#DEFAULT_PRIORITY}, and the engine's
 * configured max attempts, retry policy and timeout. Immutable and thread-safe.
 */
public final class TaskDefaults {
    private final int maxAttempts;
    private final RetryPolicy retryPolicy;
    private final @Nullable Duration timeout;

    /**
     * @param maxAttempts the engine's default attempts, at least 1
     * @param retryPolicy the engine's default backoff
     * @param timeout the engine's default timeout per attempt, or {@code null} for none
     */
    public TaskDefaults(int maxAttempts, RetryPolicy retryPolicy, @Nullable Duration timeout) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        this.maxAttempts = maxAttempts;
        this.retryPolicy = Objects.requireNonNull(retryPolicy, "retryPolicy");
        this.timeout = timeout;
    }

    /**
     * @param config the engine's settings
     * @return the defaults {@code config} sets
     */
    public static TaskDefaults of(EngineConfig config) {
        return new TaskDefaults(config.defaultMaxAttempts(), config.defaultRetryPolicy(), config.defaultTimeout());
    }

    /**
     * @param queue a task's queue, or {@code null}
     * @return {@code queue}, else {@value TaskOptions#DEFAULT_QUEUE}
     */
    public static String queue(@Nullable String queue) {
        return queue != null ? queue : TaskOptions.DEFAULT_QUEUE;
    }

    /**
     * @param options a task's options
     * @return every field set: the options' own, else the engine's default ({@code timeout} stays
     *     {@code null} when neither gives one: no timeout)
     */
    public Resolved resolve(TaskOptions options) {
        return new Resolved(
                queue(options.queue()),
                options.priority() != null ? options.priority() : TaskOptions.DEFAULT_PRIORITY,
                options.maxAttempts() != null ? options.maxAttempts() : maxAttempts,
                options.retryPolicy() != null ? options.retryPolicy() : retryPolicy,
                options.timeout() != null ? options.timeout() : timeout);
    }

    /**
     * Options with the defaults applied.
     *
     * @param queue the queue
     * @param priority the priority
     * @param maxAttempts attempts allowed, at least 1
     * @param retryPolicy the backoff
     * @param timeout per attempt, or {@code null} for none
     */
    public record Resolved(
            String queue,
            int priority,
            int maxAttempts,
            RetryPolicy retryPolicy,
            @Nullable Duration timeout) {}
}
