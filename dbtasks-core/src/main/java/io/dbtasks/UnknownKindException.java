package io.dbtasks;

/** A task kind has no handler registered with this engine. */
public class UnknownKindException extends DbTasksException {
    /**
     * @param message which kind and how to register it
     */
    public UnknownKindException(String message) {
        super(message);
    }
}
