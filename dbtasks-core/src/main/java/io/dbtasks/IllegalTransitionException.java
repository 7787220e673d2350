package io.dbtasks;

/**
 * An operation was asked of a task whose current state does not allow it (cancel a SUCCEEDED task,
 * say). Nothing was changed.
 */
public class IllegalTransitionException extends DbTasksException {
    private final TaskStatus current;

    /**
     * @param message what was asked and why it is not allowed
     * @param current the state the task was found in
     */
    public IllegalTransitionException(String message, TaskStatus current) {
        super(message);
        this.current = current;
    }

    /**
     * @return the state the task was in when the operation was refused
     */
    public TaskStatus current() {
        return current;
    }
}
