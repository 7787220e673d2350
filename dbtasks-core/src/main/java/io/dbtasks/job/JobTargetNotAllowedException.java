package io.dbtasks.job;

import io.dbtasks.NonRetryableException;

/**
 * A job names a method that is not on the allow-list. Not retryable: the message says what to
 * allow-list, and the job must be run again once it is.
 */
public class JobTargetNotAllowedException extends NonRetryableException {
    /** @param message which target, and how to allow-list it */
    public JobTargetNotAllowedException(String message) {
        super(message);
    }
}
