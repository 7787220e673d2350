package io.dbtasks.lock;

import io.dbtasks.DbTasksException;
import org.jspecify.annotations.Nullable;

/**
 * The worker no longer holds the task's lease: it expired and another worker took the task, an
 * operator retried or cancelled it, or the engine is shutting down and handed it back. Whatever the
 * handler does after this is discarded.
 *
 * <p>Also thrown by {@link LeaseLocks#withLock(String, java.time.Duration, LeasedWork)} when the
 * lock's lease could not be renewed while its work ran, so the work was interrupted.
 */
public class LeaseLostException extends DbTasksException {
    /**
     * @param message which task and token
     */
    public LeaseLostException(String message) {
        super(message);
    }

    /**
     * @param message which lease was lost and what happened to the work
     * @param cause what the work threw after it was interrupted, may be {@code null}
     */
    public LeaseLostException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
