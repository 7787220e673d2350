package io.dbtasks.lock.spi;

import io.dbtasks.WorkFailedException;

/**
 * Passes on what a caller's work threw, as {@link io.dbtasks.lock.LeaseLocks} documents it: for
 * stores built on {@link AbstractLeaseLocks}. Stateless; thread-safe.
 */
public final class WorkFailures {
    private WorkFailures() {}

    /**
     * Rethrows {@code t}: unchecked exceptions and errors as they are, checked ones wrapped in {@link
     * WorkFailedException} (an {@link InterruptedException} also restores the interrupt flag).
     *
     * @return never; declared so callers can write {@code throw rethrow(...)}
     */
    public static RuntimeException rethrow(String what, Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        if (t instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        throw new WorkFailedException(what + " failed: " + t, t);
    }
}
