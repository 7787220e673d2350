package io.dbtasks.once;

import io.dbtasks.lock.LeasedWork;
import java.time.Duration;
import java.util.Objects;

/**
 * Work that an engine may run again, under a key whose runner died, without waiting for a caller.
 * Registered by name on the engine's builder ({@code DbTasks.Builder#runOnceTarget}); a call of
 * {@link RunOnceGuards#runOnce(String, String, Duration, LeasedWork)} names it in the key's row. When
 * that row is found RUNNING past its lease (the process running it died: a {@code kill -9}, a lost
 * machine), an engine that registers the name takes the key over, by the same compare-and-set on the
 * old fencing token as any caller's takeover, so exactly one engine runs it, and runs {@link #work()}
 * under the same key ({@link io.dbtasks.lock.Lease#name()}). This is what keeps a per-slot key of a
 * scheduled method, which no caller asks for again once its slot has passed, from being lost.
 *
 * <p>Only names registered in code are run: a row's target is looked up among them and never
 * resolved otherwise. Immutable and thread-safe.
 *
 * @param name the target's name, 1 to {@value #MAX_NAME} characters, unique per engine
 * @param lease the lease of a rescued run, renewed every third of it while the work runs; positive
 * @param work runs the key again; gets the grant, whose {@code name()} is the key
 */
public record RunOnceTarget(String name, Duration lease, LeasedWork work) {
    /** The longest target name ({@code dbtasks_once.target}). */
    public static final int MAX_NAME = 200;

    /**
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the name is blank or too long, or the lease not positive
     */
    public RunOnceTarget {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(work, "work");
        if (name.isBlank() || name.length() > MAX_NAME) {
            throw new IllegalArgumentException(
                    "run-once target name must be 1 to " + MAX_NAME + " characters and not blank: '" + name + "'");
        }
        if (lease.isZero() || lease.isNegative()) {
            throw new IllegalArgumentException("run-once target '" + name + "' needs a positive lease, got " + lease);
        }
    }
}
