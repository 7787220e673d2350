package io.dbtasks;

/** A payload could not be written as JSON, or read back as its kind's payload type. */
public class InvalidPayloadException extends DbTasksException {
    /**
     * @param message which payload, which type, and what was wrong with it
     * @param cause the JSON error
     */
    public InvalidPayloadException(String message, Throwable cause) {
        super(message, cause);
    }
}
