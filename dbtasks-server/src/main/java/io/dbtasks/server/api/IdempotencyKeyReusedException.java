package io.dbtasks.server.api;

/**
 * A task idempotency key ({@code idempotencyKey} in the body) sent again with another kind or
 * payload; answered with 422.
 */
public class IdempotencyKeyReusedException extends RuntimeException {
    /** @param message which task holds the key and what to do */
    public IdempotencyKeyReusedException(String message) {
        super(message);
    }
}
