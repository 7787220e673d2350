package io.dbtasks.server.api;

/** A request the API refuses as invalid; answered with 400 and this message as the problem detail. */
public class BadRequestException extends RuntimeException {
    /** @param message what is wrong with the request and how to fix it */
    public BadRequestException(String message) {
        super(message);
    }
}
