package io.dbtasks.lock.spi;

import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeaseLocks;
import io.dbtasks.lock.LeaseLostException;
import io.dbtasks.lock.LeasedWork;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every {@link LeaseLocks} store shares: waiting in line for a lock, and holding one while work
 * runs. A store implements {@link #tryAcquire}, {@link #renew}, {@link #release}, {@link #find} and
 * its waiting line ({@link #joinLine}, {@link #placeInLine}, {@link #leaveLine}), and calls {@link
 * #released} after each successful release.
 *
 * <p>Waiting is first come, first served. A waiter takes a ticket, greater than every ticket taken
 * before it, and keeps it alive by checking its place; only the waiter with no live ticket ahead of
 * it tries to take the lock. A waiter that stops checking (its process died) drops out of the line
 * after {@value #LINE_TTL_MS} ms. Checks back off exponentially with jitter from {@value
 * #FIRST_BACKOFF_MS} ms, up to {@value #FRONT_BACKOFF_MS} ms for the first in line and {@value
 * #PER_PLACE_BACKOFF_MS} ms per waiter ahead for the others (at most {@value #MAX_BACKOFF_MS} ms),
 * so a released lock passes on quickly while a long line costs the store little. A release, or a
 * waiter leaving the line, in this process wakes its waiters at once. {@link #tryAcquire} does not
 * queue: like {@code ReentrantLock.tryLock()} on a fair lock, it takes a free lock even when others
 * wait. Holding renews the lease through {@link Renewal} and releases it at the end.
 */
public abstract class AbstractLeaseLocks implements LeaseLocks {
    private static final Logger log = LoggerFactory.getLogger(AbstractLeaseLocks.class);
    static final long FIRST_BACKOFF_MS = 2;
    static final long FRONT_BACKOFF_MS = 2;
    static final long PER_PLACE_BACKOFF_MS = 5;
    static final long MAX_BACKOFF_MS = 100;
    static final long LINE_TTL_MS = 3000;
    /** How long a waiter's ticket lasts without a check of its place. */
    protected static final Duration LINE_TTL = Duration.ofMillis(LINE_TTL_MS);
    /** The width of the {@code name} column. */
    public static final int MAX_NAME = 200;

    /** What {@link #placeInLine} returns for a ticket that expired and left the line. */
    protected static final long GONE = -1;

    private final String workerId;
    private final Renewal renewal;
    private final Object releases = new Object();
    private long releaseCount;

    /**
     * @param workerId names this process in the owner of every grant and ticket
     * @param renewal the heartbeat of {@code withLock}
     */
    protected AbstractLeaseLocks(String workerId, Renewal renewal) {
        this.workerId = Objects.requireNonNull(workerId, "workerId");
        this.renewal = Objects.requireNonNull(renewal, "renewal");
    }

    /** @return the owner name of a grant or ticket taken by the calling thread */
    protected final String currentOwner() {
        return Owners.current(workerId);
    }

    /**
     * Joins the line of waiters for {@code name}.
     *
     * @return a ticket greater than every ticket taken before, alive for {@code ttl}
     */
    protected abstract long joinLine(String name, String owner, Duration ttl);

    /**
     * Keeps {@code ticket} alive for another {@code ttl}.
     *
     * @return how many live tickets are ahead of it (0: first in line), or {@link #GONE} if it
     *     expired (its waiter did not check in time) and is no longer in the line
     */
    protected abstract long placeInLine(String name, long ticket, Duration ttl);

    /** Removes {@code ticket} from the line; nothing if it is gone already. */
    protected abstract void leaveLine(String name, long ticket);

    @Override
    public Optional<Lease> acquire(String name, Duration lease, Duration maxWait) throws InterruptedException {
        validate(name, lease);
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must not be negative, got " + maxWait);
        }
        long deadline = System.nanoTime() + maxWait.toNanos();
        String owner = currentOwner();
        long ticket = joinLine(name, owner, LINE_TTL);
        try {
            long ahead = Long.MAX_VALUE;
            long checkedAt = System.nanoTime();
            long backoff = FIRST_BACKOFF_MS;
            while (true) {
                long seen;
                synchronized (releases) {
                    seen = releaseCount;
                }
                // The first in line stays first (later tickets are greater): it only keeps its ticket alive.
                if (ahead != 0 || System.nanoTime() - checkedAt > LINE_TTL.toNanos() / 3) {
                    long place = placeInLine(name, ticket, LINE_TTL);
                    checkedAt = System.nanoTime();
                    if (place == GONE) {
                        ticket = joinLine(name, owner, LINE_TTL); // stalled past the TTL: to the back
                        ahead = Long.MAX_VALUE;
                        continue;
                    }
                    if (place < ahead) {
                        backoff = FIRST_BACKOFF_MS; // moved up: check sooner
                    }
                    ahead = place;
                }
                if (ahead == 0) {
                    Optional<Lease> granted = tryAcquire(name, lease);
                    if (granted.isPresent()) {
                        return granted;
                    }
                }
                long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (leftMs <= 0) {
                    return Optional.empty();
                }
                long cap = backoffCap(ahead);
                backoff = Math.min(cap, backoff);
                long sleep = Math.min(
                        leftMs, backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1));
                synchronized (releases) {
                    if (releaseCount == seen) {
                        releases.wait(Math.max(1, sleep));
                    }
                }
                backoff = Math.min(cap, backoff * 2);
            }
        } finally {
            leave(name, ticket);
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

    /** Wakes this process's waiters to check again; call after every successful release. */
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
        io.dbtasks.StoredText.requireName("lock name", name);
        if (name.isEmpty() || name.length() > MAX_NAME) {
            throw new IllegalArgumentException("lock name must be 1 to " + MAX_NAME + " characters: '" + name + "'");
        }
        requirePositive(lease, "lease");
    }

    /** @throws IllegalArgumentException if {@code d} is zero or negative */
    public static void requirePositive(Duration d, String what) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
    }

    /** @return the longest pause between checks of a waiter with {@code ahead} waiters before it */
    private static long backoffCap(long ahead) {
        if (ahead == 0) {
            return FRONT_BACKOFF_MS;
        }
        return ahead >= MAX_BACKOFF_MS / PER_PLACE_BACKOFF_MS ? MAX_BACKOFF_MS : PER_PLACE_BACKOFF_MS * ahead;
    }

    private void leave(String name, long ticket) {
        try {
            leaveLine(name, ticket);
            released(); // the waiters behind moved up
        } catch (RuntimeException e) {
            log.debug("Leaving the line of lock '{}' failed; ticket {} expires by itself", name, ticket, e);
        }
    }

    /**
     * Runs the work under {@code held} and decides what to report. The lease counts as lost when a
     * renewal found it gone (including one still in flight when the work returned, which {@link
     * Renewal} waits for) or when the release finds that the token no longer holds the lock: then a
     * takeover happened after the last renewal, and writes fenced with the token may have been
     * refused. A release that fails because the store cannot be reached is only logged: the last
     * renewal kept the lease alive past the end of the work (otherwise {@link Renewal} reports it
     * lost), so the work did run under the lock, and the lock frees itself when the lease ends.
     */
    private void hold(Lease held, Duration lease, LeasedWork work) {
        Renewal.Outcome outcome = null;
        boolean releasedOurs = true;
        try {
            outcome = renewal.run(held, lease, () -> renew(held, lease).isPresent(), work);
        } finally {
            try {
                releasedOurs = release(held);
            } catch (RuntimeException e) {
                log.warn(
                        "Releasing lock '{}' (token {}) failed; it frees itself when its lease ends",
                        held.name(),
                        held.token(),
                        e);
            }
        }
        if (outcome.lost() || !releasedOurs) {
            throw new LeaseLostException(
                    "Lock '" + held.name() + "' (token " + held.token() + ") was taken over while its work ran"
                            + " (found by " + (outcome.lost() ? "a renewal" : "the release") + ")"
                            + "; writes fenced with this token are refused once the new holder writes, and"
                            + " read-modify-writes must be fenced as docs/toolkit.md shows. Use a longer lease if the"
                            + " work is slow rather than stuck",
                    outcome.error());
        }
        if (outcome.error() != null) {
            throw WorkFailures.rethrow("Work under lock '" + held.name() + "'", outcome.error());
        }
    }
}
