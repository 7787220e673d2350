package io.dbtasks.server.idempotency;

import io.dbtasks.server.store.ServerSchema;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
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
 */
@Component
public class IdempotencyStore implements DisposableBean {
    private static final Logger log = LoggerFactory.getLogger(IdempotencyStore.class);

    private final JdbcTemplate jdbc;
    private final IdempotencyProperties properties;
    private final Clock clock;
    private final ScheduledExecutorService sweeper;

    /** A stored record. */
    record Entry(
            String requestHash,
            boolean done,
            int status,
            String contentType,
            String location,
            String body,
            long expiresAt) {}

    /** The outcome of a claim. */
    sealed interface Claim permits Claimed, Existing {}

    /** The key is this request's now. */
    record Claimed() implements Claim {}

    /**
     * @param entry the record a first request left
     */
    record Existing(Entry entry) implements Claim {}

    /**
     * @param jdbc the server's database
     * @param schema the server's tables, migrated first
     * @param properties the expiry
     * @param clock a clock for tests; the system clock if there is none
     */
    public IdempotencyStore(
            JdbcTemplate jdbc, ServerSchema schema, IdempotencyProperties properties, ObjectProvider<Clock> clock) {
        this.jdbc = jdbc;
        this.properties = properties;
        this.clock = clock.getIfAvailable(Clock::systemUTC);
        this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dbtasks-server-idempotency-sweep");
            t.setDaemon(true);
            return t;
        });
        sweeper.scheduleWithFixedDelay(this::sweepQuietly, 1, 1, TimeUnit.MINUTES);
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
                                + " expires_at) VALUES (?, ?, ?, 'IN_FLIGHT', ?, ?)",
                        client,
                        key,
                        requestHash,
                        now,
                        now + properties.getTtl().toMillis());
                return new Claimed();
            } catch (DuplicateKeyException e) {
                Optional<Entry> entry = find(client, key);
                if (entry.isEmpty()) {
                    continue; // released or swept meanwhile: claim again
                }
                if (entry.get().expiresAt() <= now) {
                    jdbc.update(
                            "DELETE FROM dbtasks_server_idempotency WHERE client = ? AND idem_key = ? AND expires_at = ?",
                            client,
                            key,
                            entry.get().expiresAt());
                    continue;
                }
                return new Existing(entry.get());
            }
        }
        throw new IllegalStateException("Could not claim idempotency key after 5 tries");
    }

    void complete(String client, String key, int status, String contentType, String location, String body) {
        jdbc.update(
                "UPDATE dbtasks_server_idempotency SET state = 'DONE', status = ?, content_type = ?, location = ?,"
                        + " response_body = ? WHERE client = ? AND idem_key = ? AND state = 'IN_FLIGHT'",
                status,
                contentType,
                location,
                body,
                client,
                key);
    }

    void release(String client, String key) {
        jdbc.update(
                "DELETE FROM dbtasks_server_idempotency WHERE client = ? AND idem_key = ? AND state = 'IN_FLIGHT'",
                client,
                key);
    }

    private Optional<Entry> find(String client, String key) {
        List<Entry> rows = jdbc.query(
                "SELECT request_hash, state, status, content_type, location, response_body, expires_at"
                        + " FROM dbtasks_server_idempotency WHERE client = ? AND idem_key = ?",
                (rs, n) -> new Entry(
                        rs.getString(1),
                        "DONE".equals(rs.getString(2)),
                        rs.getInt(3),
                        rs.getString(4),
                        rs.getString(5),
                        rs.getString(6),
                        rs.getLong(7)),
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
