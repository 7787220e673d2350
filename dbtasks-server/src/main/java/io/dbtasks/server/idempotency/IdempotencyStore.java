package io.dbtasks.server.idempotency;

import io.dbtasks.DbTasks;
import io.dbtasks.server.store.ServerSchema;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * {@code Idempotency-Key} records in {@code dbtasks_server_idempotency}, one per (client, key). A
 * request claims its key by inserting the row IN_FLIGHT: the primary key makes the claim atomic
 * across threads and instances. The finished response is stored on the row (DONE) for replays; a
 * response the server failed to produce (5xx) releases the key instead. Expired rows are deleted
 * every minute and ignored before that. Thread-safe.
 *
 * <p>An IN_FLIGHT row names its owner (this server's engine worker id) and carries a lease, {@code
 * dbtasks.server.idempotency.lease} from the claim, which the owner renews every third of the lease
 * while the request runs. A process that dies (SIGKILL, power loss) leaves its rows IN_FLIGHT; once
 * a row's lease has passed, a request with the same key and the same request takes the row over with
 * one guarded UPDATE (owner and lease as read, so of two competing takers exactly one wins) and runs
 * again. Re-running is safe for enqueueing: a task enqueued under a key is given a task idempotency
 * key derived from it ({@link #taskKey}), so the second run finds the task the dead process created
 * and answers with it. Liveness goes by the lease rather than by the engines' worker rows, because a
 * server that runs no queues writes no worker row and must still keep its keys. Lease times are this
 * server's clock in epoch milliseconds, like the rest of the table.
 */
@Component
public class IdempotencyStore implements DisposableBean {
    private static final Logger log = LoggerFactory.getLogger(IdempotencyStore.class);

    private final JdbcTemplate jdbc;
    private final IdempotencyProperties properties;
    private final Clock clock;
    private final ScheduledExecutorService sweeper;
    private final String owner;
    private final Set<HeldKey> held = ConcurrentHashMap.newKeySet();

    /** A key this process holds IN_FLIGHT. */
    private record HeldKey(String client, String key) {}

    /** A stored record. */
    record Entry(
            String requestHash,
            boolean done,
            int status,
            String contentType,
            String location,
            String body,
            long expiresAt,
            String owner,
            Long rawLease,
            long leaseUntil,
            long createdAt) {}

    /** The outcome of a claim. */
    sealed interface Claim permits Claimed, Existing {}

    /**
     * The key is this request's now.
     *
     * @param takenFrom the owner whose lease had passed when this request took the record over, or
     *     {@code null} for a new record
     * @param createdAt when the record was first claimed (epoch milliseconds); the same for a
     *     takeover, new after the key expired
     */
    record Claimed(String takenFrom, long createdAt) implements Claim {}

    /**
     * @param entry the record a first request left
     */
    record Existing(Entry entry) implements Claim {}

    /**
     * @param jdbc the server's database
     * @param schema the server's tables, migrated first
     * @param properties the expiry and the lease
     * @param dbTasks the engine, whose worker id names this process as the owner of its records
     * @param clock a clock for tests; the system clock if there is none
     */
    public IdempotencyStore(
            JdbcTemplate jdbc,
            ServerSchema schema,
            IdempotencyProperties properties,
            DbTasks dbTasks,
            ObjectProvider<Clock> clock) {
        this.jdbc = jdbc;
        this.properties = properties;
        this.owner = dbTasks.workerId();
        this.clock = clock.getIfAvailable(Clock::systemUTC);
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dbtasks-server-idempotency-sweep");
            t.setDaemon(true);
            return t;
        });
        sweeper.scheduleWithFixedDelay(this::sweepQuietly, 1, 1, TimeUnit.MINUTES);
        long renewMillis = Math.max(1, properties.getLease().toMillis() / 3);
        sweeper.scheduleWithFixedDelay(this::renewQuietly, renewMillis, renewMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * The task idempotency key that links a task enqueued under an {@code Idempotency-Key} header to
     * that header's record, so a request that runs again after its first process died finds the task
     * instead of enqueueing a second one. The record's creation time is part of it: the same header key
     * used anew after it expired is a new request with a new task.
     *
     * @param client the authenticated user the header key is scoped to; not {@code null}
     * @param key the header's key; not {@code null}
     * @param createdAt when the record was first claimed, epoch milliseconds
     * @return {@code idempotency-key:} and the SHA-256 of client, key and creation time in hex (80
     *     characters)
     */
    public static String taskKey(String client, String key, long createdAt) {
        return "idempotency-key:"
                + IdempotencyKeyFilter.sha256Hex(
                        (client + "\n" + key + "\n" + createdAt).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** @return the configured expiry */
    public IdempotencyProperties properties() {
        return properties;
    }

    Claim claim(String client, String key, String requestHash) {
        for (int i = 0; i < 5; i++) {
            long now = clock.millis();
            try {
                jdbc.update(
                        "INSERT INTO dbtasks_server_idempotency (client, idem_key, request_hash, state, created_at,"
                                + " expires_at, owner_id, lease_until) VALUES (?, ?, ?, 'IN_FLIGHT', ?, ?, ?, ?)",
                        client,
                        key,
                        requestHash,
                        now,
                        now + properties.getTtl().toMillis(),
                        owner,
                        now + properties.getLease().toMillis());
                held.add(new HeldKey(client, key));
                return new Claimed(null, now);
            } catch (DuplicateKeyException e) {
                Optional<Entry> entry = find(client, key);
                if (entry.isEmpty()) {
                    continue; // released or swept meanwhile: claim again
                }
                Entry found = entry.get();
                if (found.expiresAt() <= now) {
                    jdbc.update(
                            "DELETE FROM dbtasks_server_idempotency WHERE client = ? AND idem_key = ? AND expires_at = ?",
                            client,
                            key,
                            found.expiresAt());
                    continue;
                }
                if (!found.done()
                        && found.leaseUntil() <= now
                        && found.requestHash().equals(requestHash)) {
                    if (takeOver(client, key, found, now)) {
                        held.add(new HeldKey(client, key));
                        return new Claimed(
                                found.owner() == null ? "an earlier server version" : found.owner(), found.createdAt());
                    }
                    continue; // another request took it over first: read it again
                }
                return new Existing(found);
            }
        }
        throw new IllegalStateException("Could not claim idempotency key after 5 tries");
    }

    /** The guarded takeover of a record whose owner's lease has passed: 1 row = ours, 0 = another won. */
    private boolean takeOver(String client, String key, Entry found, long now) {
        String ownerClause = found.owner() == null ? "owner_id IS NULL" : "owner_id = ?";
        String leaseClause = found.rawLease() == null ? "lease_until IS NULL" : "lease_until = ?";
        List<Object> args = new java.util.ArrayList<>(
                List.of(owner, now + properties.getLease().toMillis(), client, key));
        if (found.owner() != null) {
            args.add(found.owner());
        }
        if (found.rawLease() != null) {
            args.add(found.rawLease());
        }
        int n = jdbc.update(
                "UPDATE dbtasks_server_idempotency SET owner_id = ?, lease_until = ? WHERE client = ? AND idem_key = ?"
                        + " AND state = 'IN_FLIGHT' AND " + ownerClause + " AND " + leaseClause,
                args.toArray());
        if (n > 1) {
            throw new IllegalStateException("Taking over idempotency key updated " + n + " rows; expected 0 or 1");
        }
        return n == 1;
    }

    void complete(String client, String key, int status, String contentType, String location, String body) {
        held.remove(new HeldKey(client, key));
        int n = jdbc.update(
                "UPDATE dbtasks_server_idempotency SET state = 'DONE', status = ?, content_type = ?, location = ?,"
                        + " response_body = ?, lease_until = NULL WHERE client = ? AND idem_key = ?"
                        + " AND state = 'IN_FLIGHT' AND owner_id = ?",
                status,
                contentType,
                location,
                body,
                client,
                key,
                owner);
        if (n == 0) {
            log.warn(
                    "An Idempotency-Key record was taken over by another server while its request ran here (the"
                            + " lease of {} passed); its response was not stored",
                    properties.getLease());
        }
    }

    void release(String client, String key) {
        held.remove(new HeldKey(client, key));
        jdbc.update(
                "DELETE FROM dbtasks_server_idempotency WHERE client = ? AND idem_key = ? AND state = 'IN_FLIGHT'"
                        + " AND owner_id = ?",
                client,
                key,
                owner);
    }

    /**
     * Renews the lease of every key this process holds IN_FLIGHT.
     *
     * @return how many leases were renewed
     */
    int renew() {
        int renewed = 0;
        long until = clock.millis() + properties.getLease().toMillis();
        for (HeldKey k : held) {
            renewed += jdbc.update(
                    "UPDATE dbtasks_server_idempotency SET lease_until = ? WHERE client = ? AND idem_key = ?"
                            + " AND state = 'IN_FLIGHT' AND owner_id = ?",
                    until,
                    k.client(),
                    k.key(),
                    owner);
        }
        return renewed;
    }

    private void renewQuietly() {
        try {
            renew();
        } catch (RuntimeException e) {
            log.warn("Renewing the leases of in-flight idempotency keys failed: {}", e.getMessage());
        }
    }

    private Optional<Entry> find(String client, String key) {
        List<Entry> rows = jdbc.query(
                "SELECT request_hash, state, status, content_type, location, response_body, expires_at, owner_id,"
                        + " lease_until, created_at FROM dbtasks_server_idempotency WHERE client = ? AND idem_key = ?",
                (rs, n) -> {
                    long lease = rs.getLong(9);
                    Long rawLease = rs.wasNull() ? null : lease;
                    return new Entry(
                            rs.getString(1),
                            "DONE".equals(rs.getString(2)),
                            rs.getInt(3),
                            rs.getString(4),
                            rs.getString(5),
                            rs.getString(6),
                            rs.getLong(7),
                            rs.getString(8),
                            rawLease,
                            rawLease != null
                                    ? rawLease
                                    : rs.getLong(10) + properties.getLease().toMillis(),
                            rs.getLong(10));
                },
                client,
                key);
        return rows.stream().findFirst();
    }

    /**
     * Deletes expired records.
     *
     * @return how many were deleted
     */
    public int sweep() {
        return jdbc.update("DELETE FROM dbtasks_server_idempotency WHERE expires_at <= ?", clock.millis());
    }

    private void sweepQuietly() {
        try {
            sweep();
        } catch (RuntimeException e) {
            log.warn("Sweeping expired idempotency keys failed: {}", e.getMessage());
        }
    }

    @Override
    public void destroy() {
        sweeper.shutdownNow();
    }
}
