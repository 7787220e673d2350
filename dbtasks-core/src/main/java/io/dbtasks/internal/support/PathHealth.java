package io.dbtasks.internal.support;

import io.dbtasks.DbTasksException;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The health of one path of database work that the engine exists for (enqueueing, or claiming), kept
 * apart from every other unit of work so that, say, a worker row written or a pause check read
 * cannot make a path that fails or hangs look healthy.
 *
 * <p>A path is down while the last call of it that ended failed on the database, until a later call
 * succeeds or {@link #FAILURE_MEMORY} passes without a call (a path that is not called again, such
 * as enqueueing in a quiet application, does not stay down forever); and while a call has been in
 * flight longer than the hang bound, which is how a statement waiting on a lock, a full pool or a
 * silent network shows before its timeout ends it. Failures of the request itself (SQLState class
 * 22, data, and 23, integrity) and errors that are not the database's do not count.
 *
 * <p>Thread-safe: {@link #begin}, {@link #end} and {@link #problem} are called from any thread.
 */
public final class PathHealth {
    /**
     * How long one enqueue or claim may be in flight before its path counts as hanging. Both are a
     * round trip or two when the database is well, far below this.
     */
    public static final Duration DEFAULT_HANG = Duration.ofSeconds(1);

    /** How long a failure keeps the path down when no later call of it succeeds. */
    static final Duration FAILURE_MEMORY = Duration.ofSeconds(30);

    private final String name;
    private final long hangNanos;
    private final AtomicLong calls = new AtomicLong();
    /** Calls in flight: call number to its start ({@link System#nanoTime()}). */
    private final ConcurrentHashMap<Long, Long> inFlight = new ConcurrentHashMap<>();

    // guarded by this
    private String failure;
    private long failedAtNanos;
    private Instant failedAt;

    /**
     * @param name one call of the path, for the reason ("an enqueue", "a claim")
     * @param hang how long one call may be in flight before the path counts as hanging; positive
     */
    public PathHealth(String name, Duration hang) {
        this.name = name;
        this.hangNanos = hang.toNanos();
    }

    /** @return a handle for {@link #end}; call {@code end} in a finally block */
    public long begin() {
        long call = calls.incrementAndGet();
        inFlight.put(call, System.nanoTime());
        return call;
    }

    /**
     * Ends a call.
     *
     * @param call the handle {@link #begin} returned
     * @param error what it threw, or {@code null} if it succeeded
     */
    public void end(long call, Throwable error) {
        inFlight.remove(call);
        boolean counts = error != null && isDatabaseFailure(error);
        synchronized (this) {
            if (error == null) {
                failure = null;
            } else if (counts) {
                failure = error.getMessage();
                failedAtNanos = System.nanoTime();
                failedAt = Instant.now();
            }
        }
    }

    /** @return why the path is down now, or {@code null} if it is not */
    public String problem() {
        long now = System.nanoTime();
        long oldest = Long.MAX_VALUE;
        for (Long started : inFlight.values()) {
            oldest = Math.min(oldest, started);
        }
        if (oldest != Long.MAX_VALUE && now - oldest > hangNanos) {
            return name + " has been waiting on the database for " + (now - oldest) / 1_000_000
                    + " ms (a lock, the pool or the network)";
        }
        synchronized (this) {
            if (failure != null && now - failedAtNanos < FAILURE_MEMORY.toNanos()) {
                return name + " failed last at " + failedAt + ": " + failure;
            }
        }
        return null;
    }

    private static boolean isDatabaseFailure(Throwable error) {
        if (!(error instanceof DbTasksException)) {
            return false;
        }
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql) {
                String state = sql.getSQLState();
                return state == null || !(state.startsWith("22") || state.startsWith("23"));
            }
        }
        return false;
    }
}
