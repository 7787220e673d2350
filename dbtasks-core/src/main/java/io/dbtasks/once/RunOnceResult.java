package io.dbtasks.once;

import io.dbtasks.WorkFailedException;
import io.dbtasks.lock.Lease;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What {@link RunOnceGuards#runOnce} did.
 *
 * @param key the key
 * @param outcome which case happened
 * @param lease for RAN, TOOK_OVER, FAILED and LEASE_LOST, the grant the work ran under; for
 *     SKIPPED_RUNNING, the grant of the holder that is running it; for SKIPPED_FILTERED, the grant of
 *     the filter lock's holder, or null if it could not be named; null for SKIPPED_DONE
 * @param error what the work threw, for FAILED and possibly LEASE_LOST; otherwise null
 */
public record RunOnceResult(
        String key,
        Outcome outcome,
        @Nullable Lease lease,
        @Nullable Throwable error) {
    /** The cases of a run-once call. */
    public enum Outcome {
        /** The work ran and succeeded: the key was new, or its last run had FAILED. */
        RAN,
        /** The work ran and succeeded after taking over a RUNNING row whose lease had ended. */
        TOOK_OVER,
        /** The key had already succeeded; the work did not run. */
        SKIPPED_DONE,
        /** Another holder's lease on the key is still running; the work did not run. */
        SKIPPED_RUNNING,
        /**
         * A filter in front of the guard ({@code RedisFilteredRunOnce}'s Redis lock) was held by another
         * caller, so the guard was not asked; the work did not run. The key may be running elsewhere,
         * or may already have succeeded or failed: the filter lock outlives neither, but it is
         * released only when its holder's call returns, and the database row was not read. Call again
         * later to learn the key's state.
         */
        SKIPPED_FILTERED,
        /** The work threw; the row is FAILED with the error, and a later call runs it again. */
        FAILED,
        /**
         * The lease was taken over while the work ran (a renewal or the completion found another
         * token); the work was interrupted or its completion discarded, and the new holder decides.
         */
        LEASE_LOST
    }

    /**
     * @throws NullPointerException if {@code key} or {@code outcome} is null
     */
    public RunOnceResult {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(outcome, "outcome");
    }

    /**
     * @return {@code true} if this call ran the work to success (RAN or TOOK_OVER)
     */
    public boolean ran() {
        return outcome == Outcome.RAN || outcome == Outcome.TOOK_OVER;
    }

    /**
     * @return for SKIPPED_RUNNING, who is running the key (worker id and thread); for
     *     SKIPPED_FILTERED, who holds the filter lock, if known; otherwise the owner
     *     of this call's grant; empty for SKIPPED_DONE
     */
    public Optional<String> holder() {
        return Optional.ofNullable(lease).map(Lease::owner);
    }

    /**
     * Rethrows the work's exception if the outcome is FAILED: unchecked exceptions and errors as they
     * are, checked ones wrapped in {@link WorkFailedException}.
     *
     * @return this, for chaining, if the outcome is not FAILED
     * @throws RuntimeException the work's exception
     */
    public RunOnceResult throwIfFailed() {
        if (outcome != Outcome.FAILED || error == null) {
            return this;
        }
        if (error instanceof RuntimeException r) {
            throw r;
        }
        if (error instanceof Error e) {
            throw e;
        }
        throw new WorkFailedException("Run-once work of key '" + key + "' failed: " + error, error);
    }
}
