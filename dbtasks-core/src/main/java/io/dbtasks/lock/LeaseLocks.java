package io.dbtasks.lock;

import io.dbtasks.DbTasksException;
import io.dbtasks.WorkFailedException;
import java.time.Duration;
import java.util.Optional;

/**
 * Named locks held under a lease, with a fencing token per grant.
 *
 * <p>A lock is free when nobody holds it or its holder's lease has ended by the store's clock. A free
 * lock is granted by inserting its row, or by taking over the expired row with a compare-and-set on
 * the old holder's token, so two contenders never both win. {@link #renew} and {@link #release}
 * act only when the caller's token is still the current one: a holder whose lease ran out and was
 * taken over gets {@code false} or empty, and changes nothing. Tokens strictly increase per name;
 * pass them on to fence writes (see {@link Lease}).
 *
 * <p>Two implementations: the JDBC one in the core ({@link io.dbtasks.DbTasks#locks()}, table {@code
 * dbtasks_lock}, database clock), and {@code io.dbtasks.redis.RedisLeaseLocks} in {@code
 * dbtasks-redis}.
 *
 * <p>Implementations are thread-safe. A {@link Lease} may be renewed or released from any thread.
 */
public interface LeaseLocks {
    /**
     * Takes the lock if it is free now; never waits.
     *
     * @param name the lock name, 1 to 200 characters
     * @param lease how long the grant lasts unless renewed; positive
     * @return the grant, or empty if another holder's lease is still running
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the name is empty, too long or not a {@linkplain
     *     io.dbtasks.StoredText#requireName name}, or the lease not positive
     * @throws DbTasksException if the store fails
     */
    Optional<Lease> tryAcquire(String name, Duration lease);

    /**
     * Takes the lock, waiting in line up to {@code maxWait} for it. Waiters are served first come,
     * first served across all processes: each takes a ticket and only the first live ticket tries
     * for the lock; a waiter whose process dies leaves the line within a few seconds. Waiters check
     * with exponential backoff (a few milliseconds up to 100 ms) and are woken at once when a holder
     * in this process releases. {@link #tryAcquire} does not wait in line and may take a free lock
     * ahead of waiters.
     *
     * @param name the lock name, 1 to 200 characters
     * @param lease how long the grant lasts unless renewed; positive
     * @param maxWait how long to wait at most; zero tries once
     * @return the grant, or empty if the lock did not become free within {@code maxWait}
     * @throws InterruptedException if the waiting thread is interrupted
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the name is empty or too long, the lease not positive, or
     *     {@code maxWait} negative
     * @throws DbTasksException if the store fails
     */
    Optional<Lease> acquire(String name, Duration lease, Duration maxWait) throws InterruptedException;

    /**
     * Extends a lease that is still held: it then ends {@code duration} after the store's now.
     *
     * @param lease the grant to renew
     * @param duration the new remaining time; positive
     * @return the renewed grant (same token, new expiry), or empty if the lease had ended, was
     *     released, or was taken over; then the caller no longer holds the lock
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code duration} is not positive
     * @throws DbTasksException if the store fails
     */
    Optional<Lease> renew(Lease lease, Duration duration);

    /**
     * Releases a lease that is still held, so the lock is free at once.
     *
     * @param lease the grant to release
     * @return {@code true} if it was released; {@code false} if it had already ended, been released,
     *     or been taken over (a stale token changes nothing)
     * @throws NullPointerException if {@code lease} is null
     * @throws DbTasksException if the store fails
     */
    boolean release(Lease lease);

    /**
     * @param name the lock name
     * @return the current holder's grant, or empty if the lock is free
     * @throws NullPointerException if {@code name} is null
     * @throws DbTasksException if the store fails
     */
    Optional<Lease> find(String name);

    /**
     * Runs {@code work} on the calling thread while holding the lock, if it is free now. The lease is
     * renewed every third of {@code lease} while the work runs; if a renewal finds the lease gone,
     * the work's thread is interrupted. The lock is released when the work ends, however it ends.
     *
     * <p>Every takeover while the work ran is reported with {@link LeaseLostException}: one found by
     * a renewal (a renewal still in flight when the work returns is waited for, until the lease would
     * end at the latest), one found by the release ({@link #release} returning {@code false} means
     * the token no longer held the lock), and a lease left unrenewed for longer than {@code lease}
     * (the process stalled). A release that fails with an exception (the store unreachable) is
     * logged, not thrown: the lease was alive when the work ended, and it ends by itself.
     *
     * @param name the lock name, 1 to 200 characters
     * @param lease how long each grant or renewal lasts; positive. A process that dies holds the lock
     *     for at most this long
     * @param work the work; gets the grant and its fencing token
     * @return {@code true} if the work ran, {@code false} if the lock was held by someone else
     * @throws LeaseLostException if the lease was lost or taken over while the work ran (the work was
     *     interrupted if it was still running; the cause is what the work threw, if anything): writes
     *     fenced with its token may have been refused
     * @throws WorkFailedException if the work threw a checked exception (unchecked ones and errors
     *     are rethrown as they are)
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException as for {@link #tryAcquire}
     * @throws DbTasksException if the store fails while taking the lock
     */
    boolean withLock(String name, Duration lease, LeasedWork work);

    /**
     * Like {@link #withLock(String, Duration, LeasedWork)}, but waits up to {@code maxWait} for the
     * lock as {@link #acquire} does.
     *
     * @param name the lock name, 1 to 200 characters
     * @param lease how long each grant or renewal lasts; positive
     * @param maxWait how long to wait for the lock at most
     * @param work the work; gets the grant and its fencing token
     * @return {@code true} if the work ran, {@code false} if the lock stayed held for {@code maxWait}
     * @throws InterruptedException if the thread is interrupted while waiting for the lock
     * @throws LeaseLostException if the lease was lost or taken over while the work ran, as for
     *     {@link #withLock(String, Duration, LeasedWork)}
     * @throws WorkFailedException if the work threw a checked exception
     * @throws DbTasksException if the store fails while taking the lock
     */
    boolean withLock(String name, Duration lease, Duration maxWait, LeasedWork work) throws InterruptedException;
}
