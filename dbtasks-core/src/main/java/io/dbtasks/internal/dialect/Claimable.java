package io.dbtasks.internal.dialect;

import java.util.List;

/**
 * What one engine can run, as its claim filters by: the kinds it has a handler for and, for job
 * runs, the targets its invoker allow-lists. A claim takes a due task only if its kind is among
 * {@code kinds} and, when the task names a job target ({@code job_target} is set), that target is
 * among {@code jobTargets}; every other task stays PENDING, untouched, for an engine that can run it.
 *
 * @param kinds the kinds with a handler on this engine, or {@code null} for any kind; empty claims
 *     nothing
 * @param jobTargets the job targets ({@code bean.method(types)}) the engine calls, or {@code null}
 *     when it calls any target (its invoker cannot list them)
 */
public record Claimable(List<String> kinds, List<String> jobTargets) {
    /** Copies both lists. */
    public Claimable {
        kinds = kinds == null ? null : List.copyOf(kinds);
        jobTargets = jobTargets == null ? null : List.copyOf(jobTargets);
    }

    /** Any task of the queue: no filter by kind or job target. */
    public static final Claimable ANY = new Claimable(null, null);

    /** @return whether no task can match: the engine has no kind at all */
    public boolean nothing() {
        return kinds != null && kinds.isEmpty();
    }
}
