package io.dbtasks.workflow;

import java.util.Objects;

/**
 * One edge of a workflow: the step it is given to waits for {@code step} to succeed.
 *
 * <p>When {@code step} fails for good (FAILED, out of attempts or non-retryable) or is cancelled,
 * {@link OnFailure} says what happens to the waiting step: by default it is cancelled, with the
 * dependency's state and error as its reason, and so are the steps waiting for it; with {@link
 * #runAnyway()} the edge counts as satisfied and the step runs once its other dependencies are.
 *
 * @param step the name of the step waited for, in the same workflow
 * @param onFailure what a failure or cancellation of {@code step} does to the waiting step
 */
public record Dependency(String step, OnFailure onFailure) {
    /** What a dependency's failure or cancellation does to the step that waits for it. */
    public enum OnFailure {
        /** The waiting step is cancelled with the reason, and its own dependents with it. */
        CANCEL,
        /** The waiting step runs anyway, once its other dependencies are satisfied. */
        RUN,
        /**
         * The edge is satisfied whatever the outcome, and the waiting step runs only if at least one
         * of its dependencies through such edges failed for good or was cancelled; if all of them
         * succeeded, it is cancelled (a step that handles a failure, a batch's on-failure callback).
         */
        RUN_IF_ANY_FAILED
    }

    /**
     * @param step the name of the step waited for
     * @param onFailure what a failure or cancellation of {@code step} does
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if {@code step} is blank
     */
    public Dependency {
        Objects.requireNonNull(step, "step");
        Objects.requireNonNull(onFailure, "onFailure");
        if (step.isBlank()) {
            throw new IllegalArgumentException("A dependency names a step; got a blank name");
        }
    }

    /**
     * Waits for {@code step} to succeed; cancelled if it fails for good or is cancelled.
     *
     * @param step the name of the step waited for
     * @return the dependency
     * @throws IllegalArgumentException if {@code step} is blank
     */
    public static Dependency on(String step) {
        return new Dependency(step, OnFailure.CANCEL);
    }

    /**
     * The same edge, run once {@link #step()} has ended whatever its outcome.
     *
     * @return a dependency with {@link OnFailure#RUN}
     */
    public Dependency runAnyway() {
        return new Dependency(step, OnFailure.RUN);
    }

    /**
     * The same edge, for a step that runs only on failure: once every dependency has ended, it runs
     * if one of its {@link OnFailure#RUN_IF_ANY_FAILED} dependencies failed or was cancelled, and is
     * cancelled otherwise.
     *
     * @return a dependency with {@link OnFailure#RUN_IF_ANY_FAILED}
     */
    public Dependency runIfAnyFailed() {
        return new Dependency(step, OnFailure.RUN_IF_ANY_FAILED);
    }
}
