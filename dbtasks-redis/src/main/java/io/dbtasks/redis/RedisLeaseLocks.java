package io.dbtasks.redis;

import io.dbtasks.DbTasksException;
import io.dbtasks.Lease;
import io.dbtasks.internal.AbstractLeaseLocks;
import io.dbtasks.internal.EngineConfig;
import io.dbtasks.internal.Renewal;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@link io.dbtasks.LeaseLocks} on Redis, for seed 000's "Redis lock + database constraint" setup:
 * a cheap lock in front of work whose real guarantee is a database row (see {@link
 * RedisFilteredRunOnce}).
 *
 * <p>The lock of {@code name} is the key {@code <prefix>{name}} holding {@code token|owner} with a
 * millisecond TTL: {@code SET key value NX PX lease} grants it. Its fencing token comes from {@code
 * INCR <prefix>{name}:token}, a counter that never expires, so tokens strictly increase per name.
 * Acquire, renew (check-and-extend), release (check-and-delete) and find are Lua scripts, each
 * atomic on the server, so a holder whose key expired and was re-granted cannot extend or delete the
 * new holder's key (the pattern of the Redis documentation's "Distributed locks with Redis").
 * Expiry is Redis's clock ({@code TIME} and the key's TTL). Waiters line up first come, first
 * served in two sorted sets, {@code <prefix>{name}:line} (tickets from the same counter) and {@code
 * :alive} (their expiry). The braces make all keys of a name hash to one Redis Cluster slot.
 *
 * <p>Unlike the database's {@code dbtasks_lock}, Redis keeps the counter only as durably as it is
 * configured to: a Redis without persistence that restarts starts tokens again from 1. Use tokens
 * from this class to fence writes only where that is acceptable, and keep the database row as the
 * guarantee.
 *
 * <p>Thread-safe: the Lettuce connection is shared by all threads. {@link #close()} stops the
 * renewal threads of {@code withLock}; it does not close the connection.
 */
public final class RedisLeaseLocks extends AbstractLeaseLocks implements AutoCloseable {
    /** The key prefix when none is given. */
    public static final String DEFAULT_PREFIX = "dbtasks:lock:";

    private static final String ACQUIRE = "if redis.call('EXISTS', KEYS[1]) == 1 then return {} end\n"
            + "local token = redis.call('INCR', KEYS[2])\n"
            + "redis.call('SET', KEYS[1], token .. '|' .. ARGV[1], 'NX', 'PX', ARGV[2])\n"
            + "local t = redis.call('TIME')\n"
            + "return {token, t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[2])}";
    private static final String RENEW = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end\n"
            + "redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
            + "local t = redis.call('TIME')\n"
            + "return t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[2])";
    private static final String RELEASE =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end\n" + "return 0";
    private static final String FIND = "local v = redis.call('GET', KEYS[1])\n"
            + "if not v then return {} end\n"
            + "local ttl = redis.call('PTTL', KEYS[1])\n"
            + "local t = redis.call('TIME')\n"
            + "return {v, t[1] * 1000 + math.floor(t[2] / 1000) + ttl}";
    // The line of waiters: KEYS[1] orders tickets (score = ticket), KEYS[2] holds their expiry.
    private static final String JOIN = "local t = redis.call('INCR', KEYS[3])\n"
            + "local now = redis.call('TIME')\n"
            + "redis.call('ZADD', KEYS[1], t, t)\n"
            + "redis.call('ZADD', KEYS[2], now[1] * 1000 + math.floor(now[2] / 1000) + tonumber(ARGV[1]), t)\n"
            + "return t";
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

    private final RedisCommands<String, String> redis;
    private final String prefix;
    private final Renewal renewal;

    /**
     * Locks under {@value #DEFAULT_PREFIX}, owned by a generated worker id ({@code host:pid:random}).
     *
     * @param connection an open connection; not closed by this class
     * @throws NullPointerException if {@code connection} is null
     */
    public RedisLeaseLocks(StatefulRedisConnection<String, String> connection) {
        this(connection, DEFAULT_PREFIX, EngineConfig.defaultWorkerId());
    }

    /**
     * @param connection an open connection; not closed by this class
     * @param keyPrefix prepended to every key, e.g. {@code "myapp:lock:"}
     * @param workerId names this process in the owner of every grant ({@code workerId/thread})
     * @throws NullPointerException if an argument is null
     */
    public RedisLeaseLocks(StatefulRedisConnection<String, String> connection, String keyPrefix, String workerId) {
        this(connection, keyPrefix, workerId, new Renewal("dbtasks-redis-renewal-"));
    }

    private RedisLeaseLocks(
            StatefulRedisConnection<String, String> connection, String keyPrefix, String workerId, Renewal renewal) {
        super(workerId, renewal);
        this.redis = Objects.requireNonNull(connection, "connection").sync();
        this.prefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        this.renewal = renewal;
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
                        String.valueOf(lease.toMillis())));
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
                        String.valueOf(duration.toMillis())));
        return expiresAt == 0
                ? Optional.empty()
                : Optional.of(new Lease(lease.name(), lease.token(), lease.owner(), Instant.ofEpochMilli(expiresAt)));
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

    private static <T> T call(String what, String name, Supplier<T> command) {
        try {
            return command.get();
        } catch (RedisException | IllegalStateException e) { // Lettuce: unreachable, closed, shut down
            throw new DbTasksException(
                    "Redis lock " + what + " of '" + name + "' failed: " + e.getMessage()
                            + "; check that Redis is reachable",
                    e);
        }
    }
}
