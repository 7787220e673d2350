package io.dbtasks.internal.limit;

import io.dbtasks.limit.Limit;
import io.dbtasks.limit.Rate;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The limits of one queue as of one read, and which applies to a key: the exact one, else the
 * matching pattern of highest {@link Limit#specificity()}, between equals the first pattern in
 * {@link String#compareTo} order; and the queue-wide rate, if the queue has one. Thread-safe; answers
 * are memoised per key.
 */
public final class LimitSet {
    /** A queue without limits. */
    public static final LimitSet NONE = new LimitSet(java.util.List.of(), false, null);

    private static final Limit NO_LIMIT = Limit.maxRunning("-", "-", 1);
    private static final int MEMO_KEYS = 10_000;

    private final List<Limit> limits;
    private final boolean fairQueue;
    private final Rate queueRate;
    private final int minRunning;
    private final Map<String, Limit> byKey = new ConcurrentHashMap<>();

    LimitSet(List<Limit> limits, boolean fairQueue) {
        this(limits, fairQueue, null);
    }

    LimitSet(List<Limit> limits, boolean fairQueue, Rate queueRate) {
        this.fairQueue = fairQueue;
        this.queueRate = queueRate;
        this.limits = limits.stream()
                .sorted(Comparator.comparingInt(Limit::specificity).reversed().thenComparing(Limit::keyPattern))
                .toList();
        this.minRunning = this.limits.stream()
                .filter(Limit::limitsRunning)
                .mapToInt(Limit::maxRunning)
                .min()
                .orElse(Integer.MAX_VALUE);
    }

    /**
     * @return the queue-wide rate as of the read, or {@code null} if the queue has none (the claim
     *     reads the rate in force from the row it locks)
     */
    public Rate queueRate() {
        return queueRate;
    }

    /** @return whether the queue has no limit per key, so its claims need not count keys' tasks */
    public boolean isEmpty() {
        return limits.isEmpty();
    }

    /**
     * @return whether the queue's claims go through the keyed claim: it was set fair (round robin
     *     over keys), it has a limit, or a queue-wide rate; when false it claims with one statement
     */
    public boolean fair() {
        return fairQueue || !limits.isEmpty() || queueRate != null;
    }

    /**
     * @return whether the queue's claims may take due tasks in claim order, counting only the keys they
     *     take: it has limits, is not set fair, and every limit only bounds tasks running at once
     *     (no rate, no FIFO, which need the round robin's per-key reads), and it has no queue-wide rate
     */
    public boolean inOrder() {
        return !fairQueue
                && queueRate == null
                && !limits.isEmpty()
                && limits.stream().allMatch(l -> l.rate() == null && !l.fifo() && l.limitsRunning());
    }

    /**
     * @return the smallest number of tasks RUNNING at once any of the queue's limits allows, or
     *     {@link Integer#MAX_VALUE} if none bounds them: while the whole queue has fewer RUNNING tasks
     *     than this, no key can be at its limit
     */
    public int minRunning() {
        return minRunning;
    }

    /** @return the queue's limits, most specific first */
    public List<Limit> limits() {
        return limits;
    }

    /**
     * @param key a concurrency key, or {@code null}
     * @return the limit that applies to it, or empty (always for {@code null})
     */
    public Optional<Limit> forKey(String key) {
        if (key == null || limits.isEmpty()) {
            return Optional.empty();
        }
        Limit memo = byKey.get(key);
        if (memo == null) {
            memo = limits.stream().filter(l -> l.matches(key)).findFirst().orElse(NO_LIMIT);
            if (byKey.size() < MEMO_KEYS) {
                byKey.put(key, memo);
            }
        }
        return memo == NO_LIMIT ? Optional.empty() : Optional.of(memo);
    }
}
