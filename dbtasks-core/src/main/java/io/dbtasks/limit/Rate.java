package io.dbtasks.limit;

import java.time.Duration;
import java.util.Objects;

/**
 * A rate limit: at most {@code starts} task starts of one key (or, as a queue-wide rate set with
 * {@link Limits#setQueueRate}, of a whole queue) in <em>any</em> window of length {@code period}, by
 * the database clock, across every engine.
 *
 * <p><b>The guarantee is a sliding window, exactly.</b> Whatever instant a window of length {@code
 * period} begins at, it holds at most {@code starts} starts of the key (a retry's start counts as a
 * start; a claim rolled back starts nothing). There is no burst beyond that: a key with a backlog
 * starts up to {@code starts} tasks at once, then its next as each earlier start leaves the window.
 *
 * <p><b>Why a sliding log.</b> The claim keeps the start times of each rate-limited key in the last
 * window ({@code dbtasks_rate_start}, one row per start), counts them under the key's lock,
 * starts at most what the window leaves, and deletes the starts that left it. The alternatives were
 * weighed against the guarantee above:
 *
 * <ul>
 *   <li>A token bucket (or GCRA) with a burst of {@code starts} allows up to twice {@code starts} in
 *       one window: a full bucket emptied at the end of one window and refilled at the rate through
 *       the next. Without a burst (GCRA with a tolerance of one emission interval) it holds the
 *       sliding bound but spaces starts {@code period / starts} apart, so a key with a backlog and
 *       handlers that start in clumps (a claim batch) uses less than its rate.
 *   <li>A fixed window (a counter per period) allows twice {@code starts} across a boundary.
 *   <li>A sliding log is exact and lets a key start its whole window at once; its cost is one row per
 *       start, at most {@code starts} live rows per key (plus starts not pruned yet), read and
 *       pruned by the claim of that key only. A queue or key without a rate pays nothing.
 * </ul>
 *
 * <p>Immutable and thread-safe.
 *
 * @param starts at most this many starts of one key in any window, at least 1
 * @param period the window's length, at least 1 ms, in whole milliseconds
 */
public record Rate(int starts, Duration period) {

    /** The longest window: a year. */
    public static final Duration MAX_PERIOD = Duration.ofDays(366);

    /**
     * @throws IllegalArgumentException if {@code starts} is under 1, or {@code period} is under 1 ms,
     *     not whole milliseconds, or over {@link #MAX_PERIOD}
     * @throws NullPointerException if {@code period} is {@code null}
     */
    public Rate {
        Objects.requireNonNull(period, "period");
        if (starts < 1) {
            throw new IllegalArgumentException("a rate allows at least 1 start per period, got " + starts
                    + ". To hold a key's tasks, pause the queue or cancel them; to lift the rate, set the limit"
                    + " without one");
        }
        if (period.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException("a rate's period must be at least 1 ms, got " + period);
        }
        if (period.toNanos() % 1_000_000 != 0 && period.compareTo(MAX_PERIOD) <= 0) {
            throw new IllegalArgumentException(
                    "a rate's period is stored in whole milliseconds: round " + period + " to a millisecond");
        }
        if (period.compareTo(MAX_PERIOD) > 0) {
            throw new IllegalArgumentException("a rate's period must be at most " + MAX_PERIOD + ", got " + period);
        }
    }

    /**
     * @param starts at most this many starts of one key in any window of one second, at least 1
     * @return the rate
     * @throws IllegalArgumentException if {@code starts} is under 1
     */
    public static Rate perSecond(int starts) {
        return new Rate(starts, Duration.ofSeconds(1));
    }

    /**
     * @param starts at most this many starts of one key in any window of one minute, at least 1
     * @return the rate
     * @throws IllegalArgumentException if {@code starts} is under 1
     */
    public static Rate perMinute(int starts) {
        return new Rate(starts, Duration.ofMinutes(1));
    }

    /** @return the period in milliseconds */
    public long periodMillis() {
        return period.toMillis();
    }

    /** @return the rate as people read it, such as {@code 10 starts per 1s} or {@code 1 start per 250ms} */
    @Override
    public String toString() {
        return starts + (starts == 1 ? " start" : " starts") + " per " + format(period);
    }

    private static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1_000 == 0) {
            return ms / 1_000 + "s";
        }
        return ms + "ms";
    }
}
