package io.dbtasks;

import java.time.Duration;
import java.util.Objects;
import java.util.function.DoubleSupplier;
import org.jspecify.annotations.Nullable;

/**
 * How long a failed task waits before its next attempt. Immutable and thread-safe.
 *
 * <p>Exponential backoff with a cap and jitter follows "Exponential Backoff And Jitter" (Marc
 * Brooker, AWS Architecture Blog, 2015): the n-th retry waits {@code min(max, initial *
 * multiplier^(n-1))}, then jitter draws the wait uniformly from {@code [wait * (1 - jitter),
 * wait]}; {@code jitter = 1} is the article's "full jitter", {@code 0} none. The wait is added to
 * the database clock when the failure is recorded, so every worker agrees on when the retry is due.
 */
public final class RetryPolicy {
    /** The kind of backoff. */
    public enum Backoff {
        /** The same wait every time. */
        FIXED,
        /** A wait that grows by a multiplier each attempt, up to a cap. */
        EXPONENTIAL
    }

    /** The default: exponential from 1 s, doubling, capped at 10 min, 20% jitter. */
    public static final RetryPolicy DEFAULT = exponential(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(10), 0.2);

    private final Backoff backoff;
    private final Duration initial;
    private final double multiplier;
    private final Duration max;
    private final double jitter;

    private RetryPolicy(Backoff backoff, Duration initial, double multiplier, Duration max, double jitter) {
        this.backoff = Objects.requireNonNull(backoff, "backoff");
        this.initial = requireNonNegative(initial, "initial");
        this.max = requireNonNegative(max, "max");
        if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
            throw new IllegalArgumentException("multiplier must be a finite number >= 1, got " + multiplier);
        }
        if (!(jitter >= 0.0 && jitter <= 1.0)) {
            throw new IllegalArgumentException("jitter must be between 0 and 1, got " + jitter);
        }
        if (max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("max (" + max + ") must not be less than initial (" + initial + ")");
        }
        this.multiplier = multiplier;
        this.jitter = jitter;
    }

    /**
     * The same wait before every retry, without jitter.
     *
     * @param delay the wait, zero or more
     * @return the policy
     * @throws IllegalArgumentException if {@code delay} is negative
     * @throws NullPointerException if {@code delay} is {@code null}
     */
    public static RetryPolicy fixed(Duration delay) {
        return new RetryPolicy(Backoff.FIXED, delay, 1.0, delay, 0.0);
    }

    /**
     * A wait that grows exponentially, capped, with jitter.
     *
     * @param initial the wait before the first retry
     * @param multiplier the growth per attempt, at least 1
     * @param max the cap on any wait, not less than {@code initial}
     * @param jitter the fraction of each wait drawn at random, 0 to 1
     * @return the policy
     * @throws IllegalArgumentException if a value is out of range
     * @throws NullPointerException if a duration is {@code null}
     */
    public static RetryPolicy exponential(Duration initial, double multiplier, Duration max, double jitter) {
        return new RetryPolicy(Backoff.EXPONENTIAL, initial, multiplier, max, jitter);
    }

    /**
     * A policy of any kind, as stored with a task.
     *
     * @param backoff the kind
     * @param initial the first wait, positive
     * @param multiplier the growth per attempt, at least 1 (ignored for {@link Backoff#FIXED})
     * @param max the cap, at least {@code initial}
     * @param jitter the random fraction taken off each wait, 0 to 1
     * @return the policy
     * @throws IllegalArgumentException if a value is out of range
     * @throws NullPointerException if {@code backoff} or a duration is {@code null}
     */
    public static RetryPolicy of(Backoff backoff, Duration initial, double multiplier, Duration max, double jitter) {
        return new RetryPolicy(backoff, initial, multiplier, max, jitter);
    }

    /**
     * The wait before the attempt after {@code failedAttempt}.
     *
     * @param failedAttempt the number of the attempt that just failed, starting at 1
     * @param random a source of uniform numbers in {@code [0, 1)}, used for jitter
     * @return the wait, never negative and never above {@link #max()}
     */
    public Duration delayAfter(int failedAttempt, DoubleSupplier random) {
        double millis;
        if (backoff == Backoff.FIXED) {
            millis = initial.toMillis();
        } else {
            double grown = initial.toMillis() * Math.pow(multiplier, Math.max(0, failedAttempt - 1));
            millis = Math.min(max.toMillis(), grown);
        }
        if (jitter > 0) {
            millis = millis * (1.0 - jitter * random.getAsDouble());
        }
        return Duration.ofMillis(Math.max(0L, Math.round(millis)));
    }

    /** @return the kind of backoff */
    public Backoff backoff() {
        return backoff;
    }

    /** @return the wait before the first retry */
    public Duration initial() {
        return initial;
    }

    /** @return the growth per attempt (1 for fixed) */
    public double multiplier() {
        return multiplier;
    }

    /** @return the cap on any wait */
    public Duration max() {
        return max;
    }

    /** @return the random fraction of each wait, 0 to 1 */
    public double jitter() {
        return jitter;
    }

    private static Duration requireNonNegative(Duration d, String name) {
        Objects.requireNonNull(d, name);
        if (d.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative, got " + d);
        }
        return d;
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof RetryPolicy p
                && backoff == p.backoff
                && initial.equals(p.initial)
                && multiplier == p.multiplier
                && max.equals(p.max)
                && jitter == p.jitter;
    }

    @Override
    public int hashCode() {
        return Objects.hash(backoff, initial, multiplier, max, jitter);
    }

    @Override
    public String toString() {
        return backoff == Backoff.FIXED
                ? "RetryPolicy[fixed " + initial + "]"
                : "RetryPolicy[exponential " + initial + " x" + multiplier + " max " + max + " jitter " + jitter + "]";
    }
}
