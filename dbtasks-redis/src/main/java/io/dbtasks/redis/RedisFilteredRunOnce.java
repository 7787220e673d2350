package io.dbtasks.redis;

import io.dbtasks.DbTasksException;
import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeaseLocks;
import io.dbtasks.lock.LeasedWork;
import io.dbtasks.once.RunOnceGuards;
import io.dbtasks.once.RunOnceResult;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Distributed lock and database idempotency together ("double insurance"): a Redis lock first, as a
 * cheap filter, and the database run-once row as the guarantee.
 *
 * <p>Most of the instances that fire the same scheduled job at the same moment are turned away by
 * one Redis round trip ({@code SKIPPED_FILTERED}, naming the Redis holder) and never touch the
 * database; the key may be running or already done, which only the database row says. The one that
 * gets the lock runs {@link RunOnceGuards#runOnce}, which decides for real:
 * if the Redis lock expired early, was lost in a failover, or Redis restarted, a second instance
 * can pass the filter, and the row still lets the work succeed once (it then reports {@code
 * SKIPPED_DONE} or {@code SKIPPED_RUNNING} from the database). If Redis is unreachable or frozen,
 * the filter is skipped after the lock's command timeout ({@link
 * RedisLeaseLocks#DEFAULT_COMMAND_TIMEOUT}, whatever the Lettuce client's own settings) and the
 * database guard works alone. That is logged once per outage: one warning when the filter first
 * fails, a count of the filter calls skipped meanwhile ({@link #skippedFilterCalls()}), and one
 * message when Redis answers again. The Redis lock is not renewed: it
 * only has to outlast the moment of the race, and the database lease is what the work keeps alive.
 *
 * <pre>{@code
 * RedisLeaseLocks redisLocks = new RedisLeaseLocks(redisClient.connect());
 * RedisFilteredRunOnce daily = new RedisFilteredRunOnce(redisLocks, dbTasks.guards());
 *
 * @Scheduled(cron = "0 0 2 * * *")
 * void dailyReport() {
 *     daily.runOnce(PeriodKeys.daily("daily-report", LocalDate.now()), Duration.ofMinutes(10),
 *             lease -> reports.generate()).throwIfFailed();
 * }
 * }</pre>
 *
 * <p>Thread-safe if the locks and guards are (the provided ones are).
 */
public final class RedisFilteredRunOnce {
    private static final Logger log = LoggerFactory.getLogger(RedisFilteredRunOnce.class);
    /** Prefix of the filter lock's name: the lock of key {@code k} is {@code once:k}. */
    public static final String LOCK_PREFIX = "once:";

    private final LeaseLocks filter;
    private final RunOnceGuards guards;
    private final AtomicBoolean down = new AtomicBoolean();
    private final AtomicLong skipped = new AtomicLong();
    private final AtomicLong skippedAtOutageStart = new AtomicLong();

    /**
     * @param filter the cheap lock in front, normally {@link RedisLeaseLocks}
     * @param guards the guarantee, normally {@code DbTasks#guards()}
     * @throws NullPointerException if an argument is null
     */
    public RedisFilteredRunOnce(LeaseLocks filter, RunOnceGuards guards) {
        this.filter = Objects.requireNonNull(filter, "filter");
        this.guards = Objects.requireNonNull(guards, "guards");
    }

    /**
     * Runs {@code work} at most once successfully per key, as {@link RunOnceGuards#runOnce} does,
     * after passing the Redis filter.
     *
     * @param key the run-once key, 1 to 194 characters (the lock name adds {@value #LOCK_PREFIX})
     * @param lease the lease of both the filter lock and the database row; positive
     * @param work the work; gets the database grant and its fencing token
     * @return what happened; SKIPPED_FILTERED with the Redis holder's grant when the filter turned
     *     the call away (its {@code lease} may be null if the holder released in between)
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the key is empty or too long, or the lease not positive
     * @throws DbTasksException if the database fails (a Redis failure only skips the filter)
     */
    public RunOnceResult runOnce(String key, Duration lease, LeasedWork work) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(work, "work");
        String lockName = LOCK_PREFIX + key;
        Optional<Lease> lock;
        try {
            lock = filter.tryAcquire(lockName, lease);
        } catch (DbTasksException e) {
            skipped.incrementAndGet();
            redisFailed(key, e);
            return guards.runOnce(key, lease, work);
        }
        redisAnswered();
        if (lock.isEmpty()) {
            return new RunOnceResult(key, RunOnceResult.Outcome.SKIPPED_FILTERED, holder(lockName), null);
        }
        try {
            return guards.runOnce(key, lease, work);
        } finally {
            release(lock.get());
        }
    }

    /**
     * @return how many calls since construction skipped the Redis filter because Redis failed, and
     *     were decided by the database guard alone; thread-safe
     */
    public long skippedFilterCalls() {
        return skipped.get();
    }

    /** Warns at the first failure of an outage only; later ones are counted and logged at debug. */
    private void redisFailed(String key, DbTasksException e) {
        if (down.compareAndSet(false, true)) {
            skippedAtOutageStart.set(skipped.get() - 1);
            log.warn(
                    "Redis filter unavailable (at key '{}'); the database guard decides alone until Redis"
                            + " answers again. Further failures are counted, not logged",
                    key,
                    e);
        } else {
            log.debug("Redis filter still unavailable at key '{}': {}", key, e.getMessage());
        }
    }

    private void redisAnswered() {
        if (down.get() && down.compareAndSet(true, false)) {
            log.info(
                    "Redis filter answers again; {} calls skipped it during the outage",
                    skipped.get() - skippedAtOutageStart.get());
        }
    }

    private Lease holder(String lockName) {
        try {
            return filter.find(lockName).orElse(null);
        } catch (DbTasksException e) {
            return null;
        }
    }

    private void release(Lease lock) {
        try {
            filter.release(lock); // false if it expired meanwhile: nothing to do
        } catch (DbTasksException e) {
            redisFailed(lock.name(), e); // the lock expires by itself
        }
    }
}
