package io.dbtasks;

import java.time.Instant;

/**
 * The tasks of one state in one queue ({@link DbTasks#stateCounts()}).
 *
 * @param queue the queue
 * @param status the state
 * @param count how many tasks
 * @param earliestRunAt for PENDING, the earliest due time; otherwise {@code null}
 */
public record QueueStateCount(String queue, TaskStatus status, long count, Instant earliestRunAt) {}
