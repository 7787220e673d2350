package io.dbtasks.job;

import io.dbtasks.NonRetryableException;
import org.jspecify.annotations.Nullable;

/** A job's JSON arguments do not bind to its target's parameters. Not retryable: fix the definition. */
public class InvalidJobArgumentsException extends NonRetryableException {
    /**
     * @param message which job, which parameter and what was wrong
     * @param cause the JSON error, or {@code null}
     */
    public InvalidJobArgumentsException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
