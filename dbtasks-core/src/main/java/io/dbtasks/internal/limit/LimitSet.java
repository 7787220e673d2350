package io.dbtasks.internal.limit;

import io.dbtasks.limit.Limit;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The limits of one queue as of one read, and which applies to a key: the exact one, else the
 * matching pattern of highest {@link Limit#specificity()}, between equals the first pattern in
 * {@link String#compareTo} order. Thread-safe; answers are memoised per key.
 */
public final class LimitSet {
    /** A queue without limits. */
    public static final LimitSet NONE = new LimitSet(java.util.List.of(), false);

    private static final Limit NO_LIMIT = Limit.maxRunning("-", "-", 1);
    private static final int MEMO_KEYS = 10_000;

    private final List<Limit> limits;
    private final boolean fairQueue;
    private final Map<String, Limit> byKey = new ConcurrentHashMap<>();

    LimitSet(List<Limit> limits, boolean fairQueue) {
        this.fairQueue = fairQueue;
        this.limits = limits.stream()
                .sorted(Comparator.comparingInt(Limit::specificity).reversed().thenComparing(Limit::keyPattern))
                .toList();
    }

    /** @return whether the queue has no limit at all, so its claims need not look at keys */
    public boolean isEmpty() {
        return limits.isEmpty();
    }

    /**
     * @return whether the queue's claims look at keys: it was set fair (round robin over keys), or it
     *     has a limit; when false its claims need not look at keys at all
     */
    public boolean fair() {
        return fairQueue || !limits.isEmpty();
    }

    /**
     * @return whether the queue's claims may take due tasks in claim order, counting only the keys they
     *     take: it has limits, is not set fair, and every limit only bounds tasks running at once
     *     (no rate, no FIFO, which need the round robin's per-key reads)
     */
    public boolean inOrder() {
        return !fairQueue
                && !limits.isEmpty()
                && limits.stream().allMatch(l -> l.rate() == null && !l.fifo() && l.limitsRunning());
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
