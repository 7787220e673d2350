package io.dbtasks.lock;

import java.time.Instant;
import java.util.Objects;

/**
 * One grant of a named lease: a lock from {@link LeaseLocks}, or the right to run a run-once key
 * (see {@link io.dbtasks.once.RunOnceGuards}).
 *
 * <p>The {@code token} is a fencing token: every grant of the same name gets a strictly greater one
 * than the grants before it. Present it to whatever the holder writes to (for example {@code UPDATE
 * ... SET last_token = ? WHERE last_token < ?}) so that a holder whose lease ran out, and who does
 * not know it yet, cannot overwrite the work of the holder after it (Kleppmann, "How to do
 * distributed locking", 2016).
 *
 * @param name the lock name or run-once key
 * @param token the fencing token of this grant
 * @param owner who holds it: the worker id and thread that acquired it
 * @param expiresAt when the lease ends unless renewed, by the lock store's clock (the database's,
 *     or Redis's), not this machine's
 */
public record Lease(String name, long token, String owner, Instant expiresAt) {
    /**
     * @throws NullPointerException if {@code name}, {@code owner} or {@code expiresAt} is null
     */
    public Lease {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(expiresAt, "expiresAt");
    }
}
