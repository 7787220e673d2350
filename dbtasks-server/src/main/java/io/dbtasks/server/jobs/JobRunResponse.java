package io.dbtasks.server.jobs;

import io.dbtasks.TaskStatus;
import io.dbtasks.job.JobRunRecord;
import java.time.Instant;

/**
 * One run of a job definition in {@code GET /api/jobs/{code}/runs}.
 *
 * @param runNo the run's number within its definition, from 1
 * @param taskId the run's task
 * @param enqueuedAt when the run was enqueued
 * @param startedAt when its first attempt started, or {@code null}
 * @param finishedAt when it reached its final state, or {@code null} while pending or running
 * @param outcome the state of its task, or {@code null} once retention removed the task
 * @param durationMillis milliseconds from the first attempt's start to the finish, or {@code null}
 * @param retries attempts after the first
 * @param error the last error, or {@code null}
 */
public record JobRunResponse(
        long runNo,
        long taskId,
        Instant enqueuedAt,
        Instant startedAt,
        Instant finishedAt,
        TaskStatus outcome,
        Long durationMillis,
        int retries,
        String error) {

    static JobRunResponse of(JobRunRecord r) {
        return new JobRunResponse(
                r.runNo(),
                r.taskId(),
                r.enqueuedAt(),
                r.startedAt(),
                r.finishedAt(),
                r.outcome(),
                r.duration() == null ? null : r.duration().toMillis(),
                r.retries(),
                r.error());
    }
}
