package io.dbtasks.server.audit;

import io.dbtasks.server.store.ServerSchema;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;
import org.springframework.stereotype.Component;

/**
 * The audit log of operator actions, in {@code dbtasks_server_audit}.
 *
 * <p>Append-only: entries are added by {@link #append} and read by {@link #page}; nothing changes or
 * deletes an entry except two things. A background bulk action's count of touched tasks is filled
 * in once, when it finishes ({@link #fillTouched}, which only sets a count that is still missing);
 * and {@link #purge} deletes entries older than {@code dbtasks.server.audit.retention}, once shortly
 * after start and then every {@code purge-interval}.
 *
 * <p>Every text field is sanitized before it is stored: control characters (NUL, CR, LF among them)
 * become {@code ?}, unpaired surrogates become U+FFFD, and each field is cut to the length of its
 * column, so no input can make an insert fail or forge lines where entries are shown.
 *
 * <p>Thread-safe.
 */
@Component
public class AuditLog implements DisposableBean {
    /** The longest user name stored. */
    public static final int ACTOR_LENGTH = 100;
    /** The longest action stored. */
    public static final int ACTION_LENGTH = 300;
    /** The longest target stored. */
    public static final int TARGET_LENGTH = 500;
    /** The longest parameter summary or filter stored. */
    public static final int PARAMETERS_LENGTH = 1000;
    /** The longest client address stored. */
    public static final int CLIENT_LENGTH = 100;
    /** The largest page {@link #page} returns. */
    public static final int MAX_PAGE_SIZE = 200;

    private static final Logger log = LoggerFactory.getLogger(AuditLog.class);
    private static final String COLUMNS = "id, created_at, actor, actor_role, channel, action, target, parameters,"
            + " bulk_filter, touched, outcome, status, client";

    private final JdbcTemplate jdbc;
    private final AuditProperties properties;
    private final Clock clock;
    private final ScheduledExecutorService purger;

    /**
     * Starts the periodic purge.
     *
     * @param dataSource the server's database
     * @param schema the server's tables, migrated first
     * @param properties retention and purge interval
     * @param clock a clock for tests; the system clock if there is none
     */
    public AuditLog(
            DataSource dataSource, ServerSchema schema, AuditProperties properties, ObjectProvider<Clock> clock) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.properties = properties;
        this.clock = clock.getIfAvailable(Clock::systemUTC);
        this.purger = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dbtasks-server-audit-purge");
            t.setDaemon(true);
            return t;
        });
        long every = properties.getPurgeInterval().toMillis();
        purger.scheduleWithFixedDelay(this::purgeQuietly, Math.min(every, 10_000), every, TimeUnit.MILLISECONDS);
    }

    /** @return the retention and purge interval */
    public AuditProperties properties() {
        return properties;
    }

    /** @return the clock entries are stamped with */
    public Clock clock() {
        return clock;
    }

    /**
     * Stores an entry; its {@code id} is ignored and assigned.
     *
     * @param entry the entry; text fields are sanitized and cut to their columns' length
     * @return the id the entry got
     * @throws org.springframework.dao.DataAccessException if the database refuses or cannot be reached
     */
    public long append(AuditEntry entry) {
        KeyHolder keys = new GeneratedKeyHolder();
        jdbc.update(
                con -> {
                    PreparedStatement ps = con.prepareStatement(
                            "INSERT INTO dbtasks_server_audit (created_at, actor, actor_role, channel, action, target,"
                                    + " parameters, bulk_filter, touched, outcome, status, client)"
                                    + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            new String[] {"id"});
                    ps.setLong(1, entry.at().toEpochMilli());
                    ps.setString(2, required(text(entry.actor(), ACTOR_LENGTH)));
                    ps.setString(3, required(text(entry.role(), 16)));
                    ps.setString(4, required(text(entry.channel(), 16)));
                    ps.setString(5, required(text(entry.action(), ACTION_LENGTH)));
                    ps.setString(6, text(entry.target(), TARGET_LENGTH));
                    ps.setString(7, text(entry.parameters(), PARAMETERS_LENGTH));
                    ps.setString(8, text(entry.filter(), PARAMETERS_LENGTH));
                    if (entry.touched() == null) {
                        ps.setNull(9, Types.BIGINT);
                    } else {
                        ps.setLong(9, entry.touched());
                    }
                    ps.setString(10, entry.outcome().name());
                    ps.setInt(11, entry.status());
                    ps.setString(12, text(entry.client(), CLIENT_LENGTH));
                    return ps;
                },
                keys);
        Number id = keys.getKey();
        if (id == null) {
            throw new IllegalStateException("The database returned no id for the new audit entry");
        }
        return id.longValue();
    }

    /**
     * Fills in how many tasks a background bulk action touched, once: an entry that already has a
     * count keeps it.
     *
     * @param id the entry
     * @param touched the number of tasks changed, 0 or more
     * @return whether the count was stored (false: no such entry, purged, or it had one)
     */
    public boolean fillTouched(long id, long touched) {
        return jdbc.update("UPDATE dbtasks_server_audit SET touched = ? WHERE id = ? AND touched IS NULL", touched, id)
                == 1;
    }

    /**
     * Reads one page, newest first.
     *
     * @param page the zero-based page, 0 or more
     * @param size entries per page, 1 to {@value #MAX_PAGE_SIZE}
     * @return the page and the number of entries in the log
     * @throws IllegalArgumentException if page or size is out of range
     */
    public AuditPage page(int page, int size) {
        if (page < 0) {
            throw new IllegalArgumentException("'page' must be 0 or more, got " + page);
        }
        if (size < 1 || size > MAX_PAGE_SIZE) {
            throw new IllegalArgumentException("'size' must be 1 to " + MAX_PAGE_SIZE + ", got " + size);
        }
        Long total = jdbc.queryForObject("SELECT COUNT(*) FROM dbtasks_server_audit", Long.class);
        List<AuditEntry> items = jdbc.query(
                "SELECT " + COLUMNS + " FROM dbtasks_server_audit ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                (rs, n) -> entry(rs),
                size,
                (long) page * size);
        return new AuditPage(items, page, size, total == null ? 0 : total);
    }

    /**
     * Deletes the entries older than the retention.
     *
     * @return how many were deleted
     */
    public int purge() {
        long cutoff = clock.millis() - properties.getRetention().toMillis();
        return jdbc.update("DELETE FROM dbtasks_server_audit WHERE created_at < ?", cutoff);
    }

    private void purgeQuietly() {
        try {
            int n = purge();
            if (n > 0) {
                log.info("Audit log: deleted {} entries older than {}", n, properties.getRetention());
            }
        } catch (RuntimeException e) {
            // The next run tries again; entries stay a little longer meanwhile.
            log.warn("Audit log purge failed, will retry in {}: {}", properties.getPurgeInterval(), e.toString());
        }
    }

    @Override
    public void destroy() {
        purger.shutdownNow();
    }

    private static AuditEntry entry(ResultSet rs) throws SQLException {
        long touched = rs.getLong("touched");
        Long touchedOrNull = rs.wasNull() ? null : touched;
        return new AuditEntry(
                rs.getLong("id"),
                Instant.ofEpochMilli(rs.getLong("created_at")),
                rs.getString("actor"),
                rs.getString("actor_role"),
                rs.getString("channel"),
                rs.getString("action"),
                rs.getString("target"),
                rs.getString("parameters"),
                rs.getString("bulk_filter"),
                touchedOrNull,
                AuditOutcome.valueOf(rs.getString("outcome")),
                rs.getInt("status"),
                rs.getString("client"));
    }

    private static String required(String s) {
        return s == null ? "" : s;
    }

    /**
     * Makes text safe to store and show: control characters become {@code ?}, unpaired surrogates
     * U+FFFD, and text longer than {@code max} UTF-16 units is cut (never inside a surrogate pair)
     * and ends with an ellipsis.
     *
     * @param s the text, or {@code null}
     * @param max the most UTF-16 units kept, at least 2
     * @return the safe text, or {@code null} for {@code null}
     */
    static String text(String s, int max) {
        if (s == null) {
            return null;
        }
        StringBuilder b = new StringBuilder(Math.min(s.length(), max));
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            String piece;
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                piece = s.substring(i, i + 2);
            } else if (Character.isSurrogate(c)) {
                piece = "\uFFFD";
            } else if (Character.isISOControl(c)) {
                piece = "?";
            } else {
                piece = String.valueOf(c);
            }
            int consumed = Character.isSurrogate(c) ? (piece.length() == 2 ? 2 : 1) : 1;
            boolean last = i + consumed >= s.length();
            if (b.length() + piece.length() > (last ? max : max - 1)) {
                b.append('\u2026');
                return b.toString();
            }
            b.append(piece);
            i += consumed;
        }
        return b.toString();
    }
}
