package io.dbtasks.spring;

import io.dbtasks.once.RunOnceResult;

/**
 * Thrown by a {@link RunOnce} method whose call was skipped, when the annotation asks for it with
 * {@link RunOnce.Skipped#THROW}.
 */
public class RunOnceSkippedException extends IllegalStateException {
    private final transient RunOnceResult result;

    /** @param result what the guard did: SKIPPED_RUNNING, SKIPPED_DONE or SKIPPED_FILTERED */
    public RunOnceSkippedException(RunOnceResult result) {
        super("Run-once key '" + result.key() + "' was not run here: " + result.outcome()
                + result.holder().map(h -> " (held by " + h + ")").orElse(""));
        this.result = result;
    }

    /** @return what the guard did */
    public RunOnceResult result() {
        return result;
    }
}
