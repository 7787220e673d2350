package io.dbtasks.redis;

import io.dbtasks.DbTasksException;
import io.dbtasks.lock.Lease;
import io.dbtasks.lock.spi.AbstractLeaseLocks;
import io.dbtasks.lock.spi.Renewal;
import io.dbtasks.lock.spi.WorkerIds;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * {@link io.dbtasks.lock.LeaseLocks} on Redis, for the "Redis lock + database constraint" setup:
 * a cheap lock in front of work whose real guarantee is a database row (see {@link
 * RedisFilteredRunOnce}).
 *
 * <p>The lock of {@code name} is the key {@code <prefix>{name}} holding {@code token|owner} with a
 * millisecond TTL: {@code SET key value NX PX lease} grants it. Its fencing token comes from {@code
 * INCR <prefix>{name}:token}, a counter that never expires, so tokens strictly increase per name.
 * Every grant is also at least Redis's clock in microseconds ({@code TIME}): where the increment
 * falls below the clock, the counter is set to the clock and that is the token. So tokens keep
 * increasing when the counter is missing (first use, Redis restarted without its data) and when it
 * is stale (a failover to a replica that had not received the last increments): every token handed
 * out before was at most the clock of its grant, or one more than the token before it, which the
 * clock has passed unless a name was granted more than once per microsecond on average, or Redis's
 * clock went backwards (a failover to a replica whose clock is behind). A grant from before the
 * restart or failover holds a smaller token, so it can no longer renew or release the new holder's
 * lock.
 * Acquire, renew (check-and-extend), release (check-and-delete) and find are Lua scripts, each
 * atomic on the server, so a holder whose key expired and was re-granted cannot extend or delete the
 * new holder's key (the pattern of the Redis documentation's "Distributed locks with Redis").
 * Expiry is Redis's clock: the key's absolute expiry as Redis stores it ({@code PEXPIRETIME},
 * Redis 7.0 and later), so acquire, renew and find report the same instant for one grant; on an
 * older Redis, {@code TIME} plus {@code PTTL}, which can differ by a millisecond between calls
 * because Redis freezes its clock for expiry during a script but not for {@code TIME}. Waiters line
 * up first come, first
 * served in two sorted sets, {@code <prefix>{name}:line} (tickets from the same counter) and {@code
 * :alive} (their expiry). The braces make all keys of a name hash to one Redis Cluster slot.
 *
 * <p>We chose the clock seed over taking tokens from the database ({@code dbtasks_token_seq}) to keep
 * the filter one Redis round trip, and over refusing grants of an earlier Redis life ({@code
 * run_id}) because that still hands out tokens smaller than ones already used to fence writes.
 *
 * <p>Every command waits at most the command timeout of this class ({@link
 * #DEFAULT_COMMAND_TIMEOUT} unless given), whatever the client's own timeout (while the warm-up
 * command sent by the constructor is unanswered, at most {@link #WARM_UP_TIMEOUT} from construction),
 * and is cancelled when it runs out, so a command buffered by Lettuce while it reconnects is not sent later; a Redis that
 * is down or frozen then fails each call within that time with {@link DbTasksException}.
 *
 * <p>Thread-safe: the Lettuce connection is shared by all threads. {@link #close()} stops the
 * renewal threads of {@code withLock}; it does not close the connection.
 */
public final class RedisLeaseLocks extends AbstractLeaseLocks implements AutoCloseable {
    /** The key prefix when none is given. */
    public static final String DEFAULT_PREFIX = "dbtasks:lock:";
    /** How long each Redis command may take when no timeout is given: 500 ms. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofMillis(500);
    /**
     * How long commands may take, at most, while the first command of an instance is under way
     * (the warm-up: Lettuce's and the JVM's first use of this path, which can take longer than a
     * command timeout suited to a warm process): 5 s, or the command timeout if longer.
     */
    public static final Duration WARM_UP_TIMEOUT = Duration.ofSeconds(5);

    // The greater of the counter's increment and Redis's clock in microseconds (see the class doc).
    // Returns the token as the counter's text: a Lua number that large would print as 1.7e+15. The
    // clock in microseconds stays below 2^53 until the year 2255, so Lua compares it exactly.
    private static final String NEXT_TOKEN = "local function next_token(k)\n"
            + "  local t = redis.call('TIME')\n"
            + "  local clock = t[1] .. string.sub('000000' .. t[2], -6)\n"
            + "  if redis.call('INCR', k) < tonumber(clock) then\n"
            + "    redis.call('SET', k, clock)\n"
            + "  end\n"
            + "  return redis.call('GET', k)\n"
            + "end\n";

    // The key's absolute expiry in Unix milliseconds, exactly as stored (see the class doc).
    private static final String EXPIRY = "local function expiry(k)\n"
            + "  local ok, at = pcall(redis.call, 'PEXPIRETIME', k)\n"
            + "  if ok then return at end\n"
            + "  local t = redis.call('TIME')\n"
            + "  return t[1] * 1000 + math.floor(t[2] / 1000) + redis.call('PTTL', k)\n"
            + "end\n";

    private static final String ACQUIRE = NEXT_TOKEN
            + EXPIRY
            + "if redis.call('EXISTS', KEYS[1]) == 1 then return {} end\n"
            + "local token = next_token(KEYS[2])\n"
            + "redis.call('SET', KEYS[1], token .. '|' .. ARGV[1], 'NX', 'PX', ARGV[2])\n"
            + "return {tonumber(token), expiry(KEYS[1])}";
    private static final String RENEW = EXPIRY
            + "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n"
            + "redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
            + "return expiry(KEYS[1])";
    private static final String RELEASE =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end\n" + "return 0";
    private static final String FIND = EXPIRY
            + "local v = redis.call('GET', KEYS[1])\n"
            + "if not v then return {} end\n"
            + "return {v, expiry(KEYS[1])}";
    // The line of waiters: KEYS[1] orders tickets (score = ticket), KEYS[2] holds their expiry.
    private static final String JOIN = NEXT_TOKEN
            + "local t = next_token(KEYS[3])\n"
            + "local now = redis.call('TIME')\n"
            + "redis.call('ZADD', KEYS[1], t, t)\n"
            + "redis.call('ZADD', KEYS[2], now[1] * 1000 + math.floor(now[2] / 1000) + tonumber(ARGV[1]), t)\n"
            + "return tonumber(t)";
    private static final String PLACE = "local t = redis.call('TIME')\n"
            + "local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"
            + "local dead = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)\n"
            + "for _, m in ipairs(dead) do redis.call('ZREM', KEYS[1], m) end\n"
            + "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)\n"
            + "if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then return -1 end\n"
            + "redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])\n"
            + "return redis.call('ZRANK', KEYS[1], ARGV[1])";
    private static final String LEAVE =
            "redis.call('ZREM', KEYS[1], ARGV[1])\n" + "return redis.call('ZREM', KEYS[2], ARGV[1])";

    private final RedisAsyncCommands<String, String> redis;
    private final long timeoutMs;
    private final String prefix;
    private final Renewal renewal;
    private final long warmUpUntil;
    private final java.util.concurrent.CompletableFuture<?> warmUp;

    /**
     * Locks under {@value #DEFAULT_PREFIX}, owned by a generated worker id ({@code host:pid:random}),
     * with the {@link #DEFAULT_COMMAND_TIMEOUT}.
     *
     * @param connection an open connection; not closed by this class
     * @throws NullPointerException if {@code connection} is null
     */
    public RedisLeaseLocks(StatefulRedisConnection<String, String> connection) {
        this(connection, DEFAULT_PREFIX, WorkerIds.defaultWorkerId());
    }

    /**
     * @param connection an open connection; not closed by this class
     * @param keyPrefix prepended to every key, e.g. {@code "myapp:lock:"}
     * @param workerId names this process in the owner of every grant ({@code workerId/thread})
     * @throws NullPointerException if an argument is null
     */
    public RedisLeaseLocks(StatefulRedisConnection<String, String> connection, String keyPrefix, String workerId) {
        this(connection, keyPrefix, workerId, DEFAULT_COMMAND_TIMEOUT);
    }

    /**
     * @param connection an open connection; not closed by this class. Its own timeout and
     *     reconnect buffering do not delay this class beyond {@code commandTimeout}
     * @param keyPrefix prepended to every key, e.g. {@code "myapp:lock:"}
     * @param workerId names this process in the owner of every grant ({@code workerId/thread})
     * @param commandTimeout how long each Redis command may take before the call fails with {@link
     *     DbTasksException}; positive, at most the shortest lease used (a few hundred milliseconds
     *     suits a filter)
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code commandTimeout} is not positive
     */
    public RedisLeaseLocks(
            StatefulRedisConnection<String, String> connection,
            String keyPrefix,
            String workerId,
            Duration commandTimeout) {
        this(connection, keyPrefix, workerId, commandTimeout, new Renewal("dbtasks-redis-renewal-"));
    }

    private RedisLeaseLocks(
            StatefulRedisConnection<String, String> connection,
            String keyPrefix,
            String workerId,
            Duration commandTimeout,
            Renewal renewal) {
        super(workerId, renewal);
        requirePositive(Objects.requireNonNull(commandTimeout, "commandTimeout"), "commandTimeout");
        this.timeoutMs = commandTimeout.toMillis();
        this.redis = Objects.requireNonNull(connection, "connection").async();
        this.prefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        this.renewal = renewal;
        // Sent now, answered on Lettuce's threads: until it is answered (or WARM_UP_TIMEOUT has
        // passed), a command that does not answer within the command timeout is waited for longer,
        // so a cold JVM is not taken for a Redis that is down.
        this.warmUpUntil = System.nanoTime() + WARM_UP_TIMEOUT.toNanos();
        this.warmUp = warmUp(redis, key("warm-up"));
    }

    /** @return the warm-up command's answer to come, or a completed future if it cannot be sent */
    private static java.util.concurrent.CompletableFuture<?> warmUp(
            RedisAsyncCommands<String, String> redis, String key) {
        try {
            return redis.eval(FIND, ScriptOutputType.MULTI, new String[] {key}).toCompletableFuture();
        } catch (RedisException | IllegalStateException e) { // closed: every call fails at once anyway
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }
    }

    @Override
    public Optional<Lease> tryAcquire(String name, Duration lease) {
        validate(name, lease);
        String owner = currentOwner();
        List<Object> granted = call(
                "acquire",
                name,
                () -> redis.eval(
                        ACQUIRE,
                        ScriptOutputType.MULTI,
                        new String[] {key(name), counter(name)},
                        owner,
                        String.valueOf(pxMillis(lease))));
        if (granted.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Lease(name, (Long) granted.get(0), owner, Instant.ofEpochMilli((Long) granted.get(1))));
    }

    @Override
    public Optional<Lease> renew(Lease lease, Duration duration) {
        Objects.requireNonNull(lease, "lease");
        requirePositive(Objects.requireNonNull(duration, "duration"), "duration");
        Long expiresAt = call(
                "renew",
                lease.name(),
                () -> redis.eval(
                        RENEW,
                        ScriptOutputType.INTEGER,
                        new String[] {key(lease.name())},
                        value(lease),
                        String.valueOf(pxMillis(duration))));
        return expiresAt == 0
                ? Optional.empty()
                : Optional.of(new Lease(lease.name(), lease.token(), lease.owner(), Instant.ofEpochMilli(expiresAt)));
    }

    /**
     * A lease in Redis's whole milliseconds, rounded up so that a positive lease under a millisecond
     * is one millisecond, never {@code PX 0} (refused) or {@code PEXPIRE 0} (which deletes the key).
     */
    private static long pxMillis(Duration lease) {
        long millis = lease.toMillis();
        return lease.equals(Duration.ofMillis(millis)) ? millis : millis + 1;
    }

    @Override
    public boolean release(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        Long deleted = call(
                "release",
                lease.name(),
                () -> redis.eval(RELEASE, ScriptOutputType.INTEGER, new String[] {key(lease.name())}, value(lease)));
        if (deleted == 1) {
            released();
        }
        return deleted == 1;
    }

    @Override
    public Optional<Lease> find(String name) {
        Objects.requireNonNull(name, "name");
        List<Object> held =
                call("find", name, () -> redis.eval(FIND, ScriptOutputType.MULTI, new String[] {key(name)}));
        if (held.isEmpty()) {
            return Optional.empty();
        }
        String value = (String) held.get(0);
        int bar = value.indexOf('|');
        return Optional.of(new Lease(
                name, Long.parseLong(value.substring(0, bar)), value.substring(bar + 1), Instant.ofEpochMilli((Long)
                        held.get(1))));
    }

    @Override
    protected long joinLine(String name, String owner, Duration ttl) {
        return call(
                "join the line",
                name,
                () -> redis.<Long>eval(
                        JOIN,
                        ScriptOutputType.INTEGER,
                        new String[] {key(name) + ":line", key(name) + ":alive", counter(name)},
                        String.valueOf(ttl.toMillis())));
    }

    @Override
    protected long placeInLine(String name, long ticket, Duration ttl) {
        return call(
                "check the line",
                name,
                () -> redis.<Long>eval(
                        PLACE,
                        ScriptOutputType.INTEGER,
                        new String[] {key(name) + ":line", key(name) + ":alive"},
                        String.valueOf(ticket),
                        String.valueOf(ttl.toMillis())));
    }

    @Override
    protected void leaveLine(String name, long ticket) {
        call(
                "leave the line",
                name,
                () -> redis.<Long>eval(
                        LEAVE,
                        ScriptOutputType.INTEGER,
                        new String[] {key(name) + ":line", key(name) + ":alive"},
                        String.valueOf(ticket)));
    }

    /** Stops the renewal threads of {@code withLock}; the connection stays open. */
    @Override
    public void close() {
        renewal.close();
    }

    private String key(String name) {
        return prefix + "{" + name + "}";
    }

    private String counter(String name) {
        return key(name) + ":token";
    }

    private static String value(Lease lease) {
        return lease.token() + "|" + lease.owner();
    }

    /** Sends one command and waits for it at most the command timeout, cancelling it after. */
    private <T> T call(String what, String name, Supplier<RedisFuture<T>> command) {
        RedisFuture<T> future = null;
        try {
            future = command.get();
            long wait = timeoutMs;
            if (!warmUp.isDone() && System.nanoTime() - warmUpUntil < 0) {
                wait = Math.max(timeoutMs, TimeUnit.NANOSECONDS.toMillis(warmUpUntil - System.nanoTime()));
            }
            return future.get(wait, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw failed(what, name, "no answer within " + timeoutMs + " ms", e);
        } catch (ExecutionException e) {
            throw failed(what, name, String.valueOf(e.getCause().getMessage()), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failed(what, name, "interrupted", e);
        } catch (RedisException | IllegalStateException e) { // Lettuce: unreachable, closed, shut down
            throw failed(what, name, e.getMessage(), e);
        } finally {
            if (future != null && !future.isDone()) {
                future.cancel(false); // not sent later, when Lettuce replays its reconnect buffer
            }
        }
    }

    private static DbTasksException failed(String what, String name, String why, Throwable cause) {
        return new DbTasksException(
                "Redis lock " + what + " of '" + name + "' failed: " + why + "; check that Redis is reachable", cause);
    }
}
