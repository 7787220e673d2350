package io.dbtasks.limit;

import io.dbtasks.TaskRequest;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A limit on the tasks of one queue that share a concurrency key ({@link
 * TaskRequest#concurrencyKey()}), stored as a row and enforced by every engine's claim.
 *
 * <p>A limit applies to the keys its {@code keyPattern} matches: an exact key, a pattern where
 * {@code *} stands for any run of characters ({@code tenant-*}), or {@value #EVERY_KEY} alone, the
 * default for every key of the queue. It counts each key on its own: {@code maxRunning} 3 on {@code
 * tenant-*} lets 3 tasks of {@code tenant-a} and 3 of {@code tenant-b} run at once. Where several
 * limits of a queue match a key, the exact one wins, then the pattern with the most characters other
 * than {@code *}, then {@value #EVERY_KEY}. Between patterns with as many such characters (such as
 * {@code a-*} and {@code *-b} for the key {@code a-b}), the one first in {@link String#compareTo}
 * order wins ({@code *-b}), on every engine. Tasks without a key are never limited; a key cannot
 * contain {@code *}.
 *
 * <p>A limit may also carry a {@link Rate}: at most so many starts of one key in any window of a
 * given length, by the database clock ({@link #rate(String, String, Rate)}, {@link #withRate}). A
 * limit with a rate and a {@code maxRunning} holds both; one with only a rate has {@code maxRunning}
 * {@link #NO_MAX_RUNNING}. Every start counts against the rate: the first, a retry's, and a start
 * after the rescue of a dead worker's task.
 *
 * <p>Immutable and thread-safe.
 *
 * @param queue the queue it applies to, 1 to {@value TaskRequest#MAX_NAME_LENGTH} characters
 * @param keyPattern the keys it applies to, 1 to {@value TaskRequest#MAX_KEY_LENGTH} characters
 * @param maxRunning at most this many tasks of one key RUNNING at once, at least 1 (1 is a mutex).
 *     A RUNNING task counts until it leaves RUNNING: one whose worker died counts until the rescue
 *     moves it back to PENDING
 * @param fifo whether a key's tasks start one at a time in enqueue order: the next starts only after
 *     the previous one left RUNNING and PENDING (succeeded, or failed or was cancelled for good);
 *     requires {@code maxRunning} 1, and priorities do not reorder a key's tasks
 * @param rate at most so many starts of one key in any window of the rate's period, or {@code null}
 *     for no rate limit
 */
public record Limit(
        String queue,
        String keyPattern,
        int maxRunning,
        boolean fifo,
        @Nullable Rate rate) {

    /** The {@code maxRunning} of a limit that only limits the rate: no bound on tasks running at once. */
    public static final int NO_MAX_RUNNING = Integer.MAX_VALUE;

    /** The key pattern of a queue's default limit: it applies to every key no other limit names. */
    public static final String EVERY_KEY = "*";

    /**
     * @throws IllegalArgumentException if the queue or pattern is blank or too long, {@code
     *     maxRunning} is under 1, or a FIFO limit allows more than one
     * @throws NullPointerException if the queue or pattern is {@code null}
     */
    public Limit {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(keyPattern, "keyPattern");
        if (queue.isBlank() || queue.length() > TaskRequest.MAX_NAME_LENGTH) {
            throw new IllegalArgumentException(
                    "queue must be 1 to " + TaskRequest.MAX_NAME_LENGTH + " characters and not blank");
        }
        if (keyPattern.isBlank() || keyPattern.length() > TaskRequest.MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("keyPattern must be 1 to " + TaskRequest.MAX_KEY_LENGTH
                    + " characters and not blank: an exact key, a pattern with '*', or '*' for every key");
        }
        if (maxRunning < 1) {
            throw new IllegalArgumentException("maxRunning must be at least 1 (1 is a mutex), got " + maxRunning
                    + ". To hold a key's tasks, pause the queue or cancel them; to lift the limit, remove it");
        }
        if (fifo && maxRunning != 1) {
            throw new IllegalArgumentException(
                    "a FIFO limit runs one task of a key at a time: maxRunning must be 1, got " + maxRunning);
        }
    }

    /**
     * A limit without a rate.
     *
     * @param queue the queue
     * @param keyPattern the keys it applies to
     * @param maxRunning at most this many tasks of one key RUNNING at once, at least 1
     * @param fifo whether a key's tasks start one at a time in enqueue order
     * @throws IllegalArgumentException as {@link Limit} says
     */
    public Limit(String queue, String keyPattern, int maxRunning, boolean fifo) {
        this(queue, keyPattern, maxRunning, fifo, null);
    }

    /**
     * @param queue the queue
     * @param keyPattern an exact key, a pattern with {@code *}, or {@value #EVERY_KEY}
     * @param rate at most so many starts of one key in any window of the rate's period
     * @return a rate limit without a bound on tasks running at once ({@link #NO_MAX_RUNNING})
     * @throws IllegalArgumentException as {@link Limit} says
     * @throws NullPointerException if {@code rate} is {@code null}
     */
    public static Limit rate(String queue, String keyPattern, Rate rate) {
        return new Limit(queue, keyPattern, NO_MAX_RUNNING, false, Objects.requireNonNull(rate, "rate"));
    }

    /**
     * @param rate the rate, or {@code null} for none
     * @return this limit with {@code rate} instead of its own
     */
    public Limit withRate(@Nullable Rate rate) {
        return new Limit(queue, keyPattern, maxRunning, fifo, rate);
    }

    /** @return whether {@code maxRunning} bounds the tasks running at once (it is not {@link #NO_MAX_RUNNING}) */
    public boolean limitsRunning() {
        return maxRunning != NO_MAX_RUNNING;
    }

    /**
     * @param queue the queue
     * @param keyPattern an exact key, a pattern with {@code *}, or {@value #EVERY_KEY}
     * @param maxRunning at most this many tasks of one key RUNNING at once, at least 1
     * @return a concurrency limit
     * @throws IllegalArgumentException as {@link Limit} says
     */
    public static Limit maxRunning(String queue, String keyPattern, int maxRunning) {
        return new Limit(queue, keyPattern, maxRunning, false);
    }

    /**
     * @param queue the queue
     * @param keyPattern an exact key, a pattern with {@code *}, or {@value #EVERY_KEY}
     * @return a limit that runs each key's tasks one at a time, in enqueue order
     * @throws IllegalArgumentException as {@link Limit} says
     */
    public static Limit fifo(String queue, String keyPattern) {
        return new Limit(queue, keyPattern, 1, true);
    }

    /**
     * @param key a concurrency key
     * @return whether this limit's pattern matches {@code key} (not whether it is the one that applies,
     *     which {@link #specificity()} decides)
     */
    public boolean matches(String key) {
        if (keyPattern.indexOf('*') < 0) {
            return keyPattern.equals(key);
        }
        String[] parts = keyPattern.split("\\*", -1);
        if (!key.startsWith(parts[0])) {
            return false;
        }
        int at = parts[0].length();
        for (int i = 1; i < parts.length - 1; i++) {
            int found = key.indexOf(parts[i], at);
            if (found < 0) {
                return false;
            }
            at = found + parts[i].length();
        }
        String last = parts[parts.length - 1];
        return key.length() - at >= last.length() && key.endsWith(last);
    }

    /**
     * @return how specific the pattern is: {@link Integer#MAX_VALUE} for an exact key, else the count
     *     of its characters other than {@code *} (0 for {@value #EVERY_KEY}); of the limits of a queue
     *     that match a key, the highest applies
     */
    public int specificity() {
        if (keyPattern.indexOf('*') < 0) {
            return Integer.MAX_VALUE;
        }
        return keyPattern.replace("*", "").length();
    }
}
