package io.dbtasks;

/** No task has the id or idempotency key an operation named. */
public class TaskNotFoundException extends DbTasksException {
    /**
     * @param message which task was looked for
     */
    public TaskNotFoundException(String message) {
        super(message);
    }
}
