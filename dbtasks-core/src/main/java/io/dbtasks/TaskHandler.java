package io.dbtasks;

/**
 * Runs tasks of one kind. Register it with {@link DbTasks.Builder#handler(String, Class,
 * TaskHandler)}.
 *
 * <p>A handler returning normally completes the task; throwing fails the attempt, and the task is
 * retried with backoff unless it is out of attempts or the exception is non-retryable. Handlers run
 * on worker threads, possibly many at once, so an instance must be thread-safe. A handler should
 * respond to interruption: the engine interrupts it on timeout, cancellation and lost lease.
 *
 * @param <P> the payload type, read from JSON by Jackson ({@link Void} for kinds without payload)
 */
@FunctionalInterface
public interface TaskHandler<P> {
    /**
     * Does the task's work.
     *
     * @param context the task's id, attempt, fencing token and lease controls; never {@code null}
     * @param payload the payload read as {@code P}; never {@code null} unless {@code P} is {@link Void} (a
     *     task of a payload kind enqueued without one fails before its handler runs)
     * @throws Exception to fail this attempt
     */
    void handle(TaskContext context, P payload) throws Exception;
}
