package io.dbtasks.internal;

import io.dbtasks.Lease;
import io.dbtasks.LeaseLocks;
import io.dbtasks.LeaseLostException;
import io.dbtasks.LeasedWork;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * What every {@link LeaseLocks} store shares: waiting for a lock, and holding one while work runs.
 * A store implements {@link #tryAcquire}, {@link #renew}, {@link #release} and {@link #find}, and
 * calls {@link #released} after each successful release.
 *
 * <p>Waiting polls {@code tryAcquire} with exponential backoff and jitter, from {@value
 * #FIRST_BACKOFF_MS} ms up to {@value #MAX_BACKOFF_MS} ms, and a release in this process wakes the
 * waiters at once. Holding renews the lease through {@link Renewal} and releases it at the end.
 */
public abstract class AbstractLeaseLocks implements LeaseLocks {
    static final long FIRST_BACKOFF_MS = 2;
    static final long MAX_BACKOFF_MS = 100;
    /** The width of the {@code name} column. */
    public static final int MAX_NAME = 200;

    private final Renewal renewal;
    private final Object releases = new Object();
    private long releaseCount;

    /** @param renewal the heartbeat of {@code withLock} */
    protected AbstractLeaseLocks(Renewal renewal) {
        this.renewal = Objects.requireNonNull(renewal, "renewal");
    }

    @Override
    public Optional<Lease> acquire(String name, Duration lease, Duration maxWait) throws InterruptedException {
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, got " + maxWait);
        }
        long deadline = System.nanoTime() + maxWait.toNanos();
        long backoff = FIRST_BACKOFF_MS;
        while (true) {
            long seen;
            synchronized (releases) {
                seen = releaseCount;
            }
            Optional<Lease> granted = tryAcquire(name, lease);
            if (granted.isPresent()) {
                return granted;
            }
            long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (leftMs <= 0) {
                return Optional.empty();
            }
            long sleep =
                    Math.min(leftMs, backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1));
            synchronized (releases) {
                if (releaseCount == seen) {
                    releases.wait(Math.max(1, sleep));
                }
            }
            backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        }
    }

    @Override
    public boolean withLock(String name, Duration lease, LeasedWork work) {
        Objects.requireNonNull(work, "work");
        Optional<Lease> granted = tryAcquire(name, lease);
        granted.ifPresent(held -> hold(held, lease, work));
        return granted.isPresent();
    }

    @Override
    public boolean withLock(String name, Duration lease, Duration maxWait, LeasedWork work)
            throws InterruptedException {
        Objects.requireNonNull(work, "work");
        Optional<Lease> granted = acquire(name, lease, maxWait);
        granted.ifPresent(held -> hold(held, lease, work));
        return granted.isPresent();
    }

    /** Wakes this process's waiters; call after every successful release. */
    protected final void released() {
        synchronized (releases) {
            releaseCount++;
            releases.notifyAll();
        }
    }

    /** Checks a lock name and lease duration as the interface documents. */
    protected static void validate(String name, Duration lease) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(lease, "lease");
        if (name.isEmpty() || name.length() > MAX_NAME) {
            throw new IllegalArgumentException("lock name must be 1 to " + MAX_NAME + " characters: '" + name + "'");
        }
        requirePositive(lease, "lease");
    }

    /** @throws IllegalArgumentException if {@code d} is zero or negative */
    protected static void requirePositive(Duration d, String what) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
    }

    private void hold(Lease held, Duration lease, LeasedWork work) {
        Renewal.Outcome outcome;
        try {
            outcome = renewal.run(held, lease, () -> renew(held, lease).isPresent(), work);
        } finally {
            release(held);
        }
        if (outcome.lost()) {
            throw new LeaseLostException(
                    "Lock '" + held.name() + "' (token " + held.token() + ") was taken over while its work ran,"
                            + " so the work was interrupted; writes fenced with this token are refused once the new"
                            + " holder writes. Use a longer lease if the work is slow rather than stuck",
                    outcome.error());
        }
        if (outcome.error() != null) {
            throw WorkFailures.rethrow("Work under lock '" + held.name() + "'", outcome.error());
        }
    }
}
