package io.dbtasks.server.api;

/** A payload over {@code dbtasks.server.max-payload-size}; answered with 413. */
public class PayloadTooLargeException extends RuntimeException {
    /** @param message the limit and how to stay under it */
    public PayloadTooLargeException(String message) {
        super(message);
    }
}
