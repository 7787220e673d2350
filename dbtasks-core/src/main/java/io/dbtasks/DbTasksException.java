package io.dbtasks;

import org.jspecify.annotations.Nullable;

/**
 * The root of every exception dbtasks throws. Unchecked; its message says what went wrong and what
 * to do about it.
 */
public class DbTasksException extends RuntimeException {
    /**
     * @param message what went wrong and what to do
     */
    public DbTasksException(String message) {
        super(message);
    }

    /**
     * @param message what went wrong and what to do
     * @param cause the underlying failure, may be {@code null}
     */
    public DbTasksException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
