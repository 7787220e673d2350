package io.dbtasks.limit;

import io.dbtasks.TaskRequest;
import java.time.Duration;
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
 * than {@code *}, then {@value #EVERY_KEY}. Tasks without a key are never limited.
 *
 * <p>Immutable and thread-safe.
 *
 * @param queue the queue it applies to, 1 to {@value TaskRequest#MAX_NAME_LENGTH} characters
 * @param keyPattern the keys it applies to, 1 to {@value TaskRequest#MAX_KEY_LENGTH} characters
 * @param maxRunning at most this many tasks of one key RUNNING at once (at least 1; 1 is a mutex),
 *     or {@code null} for no concurrency limit. A RUNNING task counts until it leaves RUNNING: one
 *     whose worker died counts until the rescue moves it back to PENDING
 * @param fifo whether a key's tasks start one at a time in enqueue order: the next starts only after
 *     the previous one finished (succeeded, failed for good or was cancelled); implies {@code
 *     maxRunning} 1, and priorities do not reorder a key's tasks
 * @param rateStarts at most this many starts of one key per {@code rateWindow}, or {@code null}
 *     for no rate limit (then {@code rateWindow} is {@code null} too)
 * @param rateWindow the rate limit's window, at least one millisecond, or {@code null}
 */
public record Limit(
        String queue,
        String keyPattern,
        @Nullable Integer maxRunning,
        boolean fifo,
        @Nullable Integer rateStarts,
        @Nullable Duration rateWindow) {

    /** The key pattern of a queue's default limit: it applies to every key no other limit names. */
    public static final String EVERY_KEY = "*";

    /**
     * @throws IllegalArgumentException if the queue or pattern is blank or too long, {@code
     *     maxRunning} is under 1, the rate is half given or not positive, or the limit limits nothing
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
        if (maxRunning != null && maxRunning < 1) {
            throw new IllegalArgumentException(
                    "maxRunning must be at least 1 (1 is a mutex), or null for no concurrency limit; got " + maxRunning
                            + ". To stop a key's tasks, pause the queue or cancel them");
        }
        if ((rateStarts == null) != (rateWindow == null)) {
            throw new IllegalArgumentException("give both rateStarts and rateWindow, or neither");
        }
        if (rateStarts != null && (rateStarts < 1 || rateWindow.toMillis() < 1)) {
            throw new IllegalArgumentException("a rate limit needs at least 1 start per window of at least 1 ms, got "
                    + rateStarts + " per " + rateWindow);
        }
        if (fifo) {
            maxRunning = 1;
        }
        if (maxRunning == null && rateStarts == null) {
            throw new IllegalArgumentException(
                    "a limit needs maxRunning, fifo or a rate; to lift a limit, remove it (Limits.remove)");
        }
    }

    /**
     * @param queue the queue
     * @param keyPattern an exact key, a pattern with {@code *}, or {@value #EVERY_KEY}
     * @param maxRunning at most this many tasks of one key RUNNING at once, at least 1
     * @return a concurrency limit
     * @throws IllegalArgumentException as {@link Limit} says
     */
    public static Limit maxRunning(String queue, String keyPattern, int maxRunning) {
        return new Limit(queue, keyPattern, maxRunning, false, null, null);
    }

    /**
     * @param queue the queue
     * @param keyPattern an exact key, a pattern with {@code *}, or {@value #EVERY_KEY}
     * @return a limit that runs each key's tasks one at a time, in enqueue order
     * @throws IllegalArgumentException as {@link Limit} says
     */
    public static Limit fifo(String queue, String keyPattern) {
        return new Limit(queue, keyPattern, 1, true, null, null);
    }

    /**
     * @param queue the queue
     * @param keyPattern an exact key, a pattern with {@code *}, or {@value #EVERY_KEY}
     * @param starts at most this many starts of one key per window, at least 1
     * @param window the window, at least one millisecond
     * @return a rate limit
     * @throws IllegalArgumentException as {@link Limit} says
     */
    public static Limit rate(String queue, String keyPattern, int starts, Duration window) {
        return new Limit(queue, keyPattern, null, false, starts, Objects.requireNonNull(window, "window"));
    }

    /**
     * @param starts at most this many starts of one key per window, at least 1
     * @param window the window, at least one millisecond
     * @return this limit with that rate limit as well
     * @throws IllegalArgumentException as {@link Limit} says
     */
    public Limit withRate(int starts, Duration window) {
        return new Limit(queue, keyPattern, maxRunning, fifo, starts, Objects.requireNonNull(window, "window"));
    }

    /**
     * @param maxRunning at most this many tasks of one key RUNNING at once, at least 1
     * @return this limit with that concurrency limit (and without FIFO)
     * @throws IllegalArgumentException as {@link Limit} says
     */
    public Limit withMaxRunning(int maxRunning) {
        return new Limit(queue, keyPattern, maxRunning, false, rateStarts, rateWindow);
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
