package io.dbtasks;

/**
 * The worker no longer holds the task's lease: it expired and another worker took the task, an
 * operator retried or cancelled it, or the engine is shutting down and handed it back. Whatever the
 * handler does after this is discarded.
 */
public class LeaseLostException extends DbTasksException {
    /**
     * @param message which task and token
     */
    public LeaseLostException(String message) {
        super(message);
    }
}
