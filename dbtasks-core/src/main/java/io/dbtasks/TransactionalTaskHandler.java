package io.dbtasks;

import java.sql.Connection;

/**
 * Runs tasks of one kind whose effects live in the task's own database, exactly once. Register it
 * with {@link DbTasks.Builder#transactionalHandler(String, Class, TransactionalTaskHandler)}.
 *
 * <p>The handler writes its effects through {@code transaction}, a connection with auto-commit off
 * that the engine owns. When the handler returns, the engine records the task's completion on the
 * same connection with an UPDATE guarded by the task id, the attempt's fencing token and RUNNING,
 * and commits only if that UPDATE matched the row. If the lease was lost meanwhile (it expired and
 * another worker took the task, or an operator changed it), the guard matches 0 rows and the whole
 * transaction, effects included, rolls back. If the handler throws, the transaction rolls back and
 * the attempt is recorded as failed. So the effects commit together with SUCCEEDED or not at all:
 * the operation and the task's status succeed or fail together.
 *
 * <p>The handler must not commit, roll back or close the connection, nor change its auto-commit
 * mode. A long transaction holds row locks for its whole run: keep transactional handlers short.
 * Instances must be thread-safe.
 *
 * @param <P> the payload type, read from JSON by Jackson ({@link Void} for kinds without payload)
 */
@FunctionalInterface
public interface TransactionalTaskHandler<P> {
    /**
     * Does the task's work inside the engine's transaction.
     *
     * @param context the task's id, attempt, fencing token and lease controls; never {@code null}
     * @param transaction the open transaction to write effects through; never {@code null}
     * @param payload the payload read as {@code P}; never {@code null} unless {@code P} is {@link Void}
     * @throws Exception to fail this attempt; the transaction rolls back
     */
    void handle(TaskContext context, Connection transaction, P payload) throws Exception;
}
