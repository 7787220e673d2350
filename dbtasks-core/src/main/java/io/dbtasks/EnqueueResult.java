package io.dbtasks;

/**
 * What an enqueue did.
 *
 * @param task the task as stored: the new one, or the existing one when {@code duplicate}
 * @param duplicate {@code true} when a task with the same idempotency key already existed and
 *     nothing was inserted
 */
public record EnqueueResult(Task task, boolean duplicate) {}
