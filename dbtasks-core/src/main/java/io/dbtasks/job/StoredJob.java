package io.dbtasks.job;

import io.dbtasks.TaskStatus;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A job definition as stored, with what its runs did. A snapshot; read it again to see changes.
 *
 * @param id the row id, assigned by the database; keyset pages continue after it
 * @param definition the definition
 * @param runs how many runs were enqueued
 * @param lastTaskId the task of the latest run, or {@code null} before the first
 * @param lastStatus that task's status, or {@code null} before the first run or after retention
 *     deleted the task
 * @param lastError that task's last error, or {@code null}
 * @param createdAt when the definition was created, by the database clock
 * @param updatedAt when it was last changed by create or update
 */
public record StoredJob(
        long id,
        JobDefinition definition,
        long runs,
        @Nullable Long lastTaskId,
        @Nullable TaskStatus lastStatus,
        @Nullable String lastError,
        Instant createdAt,
        Instant updatedAt) {}
