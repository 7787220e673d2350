package io.dbtasks.limit;

import io.dbtasks.TaskRequest;
import java.util.Objects;

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
 */
public record Limit(String queue, String keyPattern, int maxRunning, boolean fifo) {

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
