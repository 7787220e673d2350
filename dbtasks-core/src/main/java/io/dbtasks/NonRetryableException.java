package io.dbtasks;

/**
 * Thrown by a handler to fail its task at once, without using up the remaining attempts. Handlers
 * may also throw any exception type listed with {@link DbTasks.Builder#nonRetryable(Class)}.
 */
public class NonRetryableException extends DbTasksException {
    /**
     * @param message why retrying would not help
     */
    public NonRetryableException(String message) {
        super(message);
    }

    /**
     * @param message why retrying would not help
     * @param cause the underlying failure
     */
    public NonRetryableException(String message, Throwable cause) {
        super(message, cause);
    }
}
