package io.dbtasks.server.api;

import io.dbtasks.Attempt;
import io.dbtasks.AttemptOutcome;
import java.time.Instant;

/**
 * One attempt of a task as the API shows it.
 *
 * @param id the attempt row's id
 * @param taskId the task
 * @param attempt the attempt number, from 1
 * @param worker the worker that ran it
 * @param fencingToken the fencing token it ran under
 * @param startedAt when it was claimed
 * @param finishedAt when its outcome was recorded
 * @param durationMillis {@code finishedAt - startedAt} in milliseconds
 * @param outcome how it ended
 * @param errorClass the exception class, or {@code null}
 * @param errorMessage the exception message, or {@code null}
 * @param stackTrace the truncated stack trace, or {@code null}
 */
public record AttemptResponse(
        long id,
        long taskId,
        int attempt,
        String worker,
        long fencingToken,
        Instant startedAt,
        Instant finishedAt,
        long durationMillis,
        AttemptOutcome outcome,
        String errorClass,
        String errorMessage,
        String stackTrace) {

    static AttemptResponse of(Attempt a, boolean showStackTrace) {
        return new AttemptResponse(
                a.id(),
                a.taskId(),
                a.attempt(),
                a.worker(),
                a.fencingToken(),
                a.startedAt(),
                a.finishedAt(),
                a.duration() == null ? 0 : a.duration().toMillis(),
                a.outcome(),
                a.errorClass(),
                a.errorMessage(),
                showStackTrace ? a.stackTrace() : null);
    }
}
