package io.dbtasks;

import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * One row of a task's execution history.
 *
 * @param id the attempt row's id
 * @param taskId the task this attempt belongs to
 * @param attempt the attempt number, starting at 1
 * @param worker the worker (lease owner) that ran the attempt
 * @param fencingToken the fencing token the attempt ran under
 * @param startedAt when the attempt was claimed, by the database clock
 * @param finishedAt when the outcome was recorded, by the database clock
 * @param duration how long the attempt ran, measured by the worker (for a LEASE_EXPIRED attempt,
 *     from {@code startedAt} to the rescue, by the database clock)
 * @param outcome how the attempt ended
 * @param errorClass the thrown exception's class name, or {@code null} when it succeeded
 * @param errorMessage the thrown exception's message, or {@code null}
 * @param stackTrace the stack trace, truncated, or {@code null}
 */
public record Attempt(
        long id,
        long taskId,
        int attempt,
        String worker,
        long fencingToken,
        Instant startedAt,
        Instant finishedAt,
        Duration duration,
        AttemptOutcome outcome,
        @Nullable String errorClass,
        @Nullable String errorMessage,
        @Nullable String stackTrace) {}
