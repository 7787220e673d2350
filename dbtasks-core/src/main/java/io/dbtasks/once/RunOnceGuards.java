package io.dbtasks.once;

import io.dbtasks.DbTasksException;
import io.dbtasks.lock.LeasedWork;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Run-once guards: work that must succeed at most once per key across every instance of the
 * application, such as a daily report, with a record of each run.
 *
 * <p>Each key has one row in {@code dbtasks_once}, whose primary key is the guarantee. The first
 * caller inserts it as RUNNING under a lease with a fencing token and runs the work; the row then
 * becomes SUCCEEDED or FAILED. Later callers read the row: SUCCEEDED is skipped; RUNNING within its
 * lease is skipped and names its holder; RUNNING past its lease (the holder died) is taken over by a
 * compare-and-set on the old token; FAILED is run again, also by compare-and-set. Every change is one
 * UPDATE guarded by the key and token, so a holder that lost its lease cannot complete, renew or
 * fail the row any more. Expiry is decided by the database clock. Build period keys with {@link
 * PeriodKeys}. A key that no caller asks for again (a scheduled method's slot) can name a {@link
 * RunOnceTarget}, which an engine runs again when the key's runner died. After a success, the row
 * keeps the error of the latest failed run ({@code last_error}) as a trace.
 *
 * <p>Thread-safe.
 */
public interface RunOnceGuards {
    /**
     * Runs {@code work} on the calling thread unless the key already succeeded or is running
     * elsewhere. While it runs, the lease is renewed every third of {@code lease}; if a renewal finds
     * the row taken over, the thread is interrupted and the result is {@link
     * RunOnceResult.Outcome#LEASE_LOST}. Every takeover while the work ran is reported so: a renewal
     * still in flight when the work returns is waited for, and the completion is guarded by the
     * token, so it records nothing and reports LEASE_LOST if the row changed hands.
     *
     * <p>Failures are reported, not thrown: when the work throws an exception the row becomes FAILED
     * with the error, a warning is logged, and the result is {@link RunOnceResult.Outcome#FAILED}
     * with the exception; {@link RunOnceResult#throwIfFailed()} rethrows it for callers that want
     * exceptions. An {@link Error} is recorded the same way and then rethrown.
     *
     * @param key the key, 1 to 255 characters; for periodic work include the period ({@link
     *     PeriodKeys#daily})
     * @param lease how long the work may go without a renewal before another caller may take it
     *     over; positive. A process that dies mid-work blocks the key for at most this long
     * @param work the work; gets the grant (key, fencing token, owner, expiry)
     * @return which case happened; never null
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the key is empty, too long or holds what {@link
     *     io.dbtasks.StoredText} refuses, or the lease not positive
     * @throws DbTasksException if the database fails while claiming the key
     */
    RunOnceResult runOnce(String key, Duration lease, LeasedWork work);

    /**
     * As {@link #runOnce(String, Duration, LeasedWork)}, and names the {@link RunOnceTarget} that runs
     * the key again if this call's process dies while the work runs: once the key's lease has ended,
     * an engine that registers {@code target} takes the key over (one engine, by compare-and-set) and
     * runs the target's work under the same key, with no caller needed. Use it for keys that no
     * caller asks for again, such as a scheduled method's per-slot keys. An engine that does not
     * register the name leaves the row alone; a caller of the same key still takes it over as usual.
     *
     * @param key as for {@link #runOnce(String, Duration, LeasedWork)}
     * @param target the registered target's name, 1 to {@value RunOnceTarget#MAX_NAME} characters, or
     *     {@code null} for none (then this is {@link #runOnce(String, Duration, LeasedWork)})
     * @param lease as for {@link #runOnce(String, Duration, LeasedWork)}
     * @param work as for {@link #runOnce(String, Duration, LeasedWork)}
     * @return which case happened; never null
     * @throws NullPointerException if the key, lease or work is null
     * @throws IllegalArgumentException if the key or target is empty or too long, or the lease not
     *     positive
     * @throws DbTasksException if the database fails while claiming the key
     */
    RunOnceResult runOnce(String key, @Nullable String target, Duration lease, LeasedWork work);

    /**
     * Deletes guard rows that have not changed for {@code age} (finished ones, and RUNNING ones
     * whose lease has ended), by the database clock, in batches of 1,000 rows per statement. A key
     * whose row is deleted may run again: keep rows longer than the window in which a key can
     * recur.
     *
     * @param age how old a row must be; positive
     * @return how many rows were deleted
     * @throws IllegalArgumentException if {@code age} is not positive
     * @throws DbTasksException if the database fails; the batches deleted before it stay deleted
     */
    int deleteOlderThan(Duration age);
}
