package io.dbtasks.job;

import io.dbtasks.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * One run of a job definition, as its execution log shows it: the run's number and task, when it was
 * enqueued, started and finished, its outcome, how long it took, how often it was retried and its
 * last error. Read from {@code dbtasks_job_run}, the run's task and its attempts.
 *
 * @param runNo the run's number within its definition, from 1
 * @param taskId the id of the run's task
 * @param enqueuedAt when the run was enqueued (database clock)
 * @param startedAt when its first attempt started, or {@code null} if none has started (or the task
 *     was removed by retention)
 * @param finishedAt when it reached its final state, or {@code null} while PENDING or RUNNING (or if
 *     the task was removed)
 * @param outcome the state of the run's task (SUCCEEDED, FAILED and CANCELLED are final), or {@code
 *     null} if the task was removed by retention
 * @param duration {@code finishedAt - startedAt} (the time from the first attempt's start to the end,
 *     retries' waits included), or {@code null} while either is unknown
 * @param retries attempts after the first (attempts made - 1, at least 0)
 * @param error the last error recorded on the task, or {@code null}
 */
public record JobRunRecord(
        long runNo,
        long taskId,
        Instant enqueuedAt,
        @Nullable Instant startedAt,
        @Nullable Instant finishedAt,
        @Nullable TaskStatus outcome,
        @Nullable Duration duration,
        int retries,
        @Nullable String error) {}
