package io.dbtasks;

/**
 * Work given to dbtasks (a {@link io.dbtasks.lock.LeasedWork}, an {@link io.dbtasks.inbox.InboxHandler}) threw a checked exception;
 * {@link #getCause()} is that exception. Unchecked exceptions and errors from the work are rethrown
 * as they are, not wrapped.
 */
public class WorkFailedException extends DbTasksException {
    /**
     * @param message which work failed
     * @param cause what the work threw
     */
    public WorkFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
