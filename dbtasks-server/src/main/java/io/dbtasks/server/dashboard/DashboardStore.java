package io.dbtasks.server.dashboard;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskStatus;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The dashboard's read queries on the dbtasks tables: what the core's {@link DbTasks} API does not
 * offer (keyset paging with every filter, payload search, the aggregate behind the overview, the
 * lock, guard and inbox tables). Read-only; every change goes through {@link DbTasks}.
 *
 * <p>Paging is by keyset on the primary key, newest first ({@code id < cursor ORDER BY id DESC
 * LIMIT n}): each page costs the same however deep it is, where {@code OFFSET} would read and throw
 * away every earlier row. Filters by state use the partial indexes the core keeps (PENDING: the
 * claim index, RUNNING: the rescue index, FAILED and CANCELLED: their own; SUCCEEDED walks the
 * primary key), a reference uses {@code dbtasks_task_reference_idx} (migration V10), a key the
 * unique key index.
 *
 * <p>Payload search: PostgreSQL {@code payload::jsonb #>> path}, MariaDB {@code
 * JSON_UNQUOTE(JSON_EXTRACT(payload, path))}; H2 has no JSON path functions, so there the rows the
 * other filters select are read in batches and matched in Java, at most {@value #H2_SCAN_LIMIT} per
 * page.
 *
 * <p>Thread-safe.
 */
@Component
public class DashboardStore {
    static final int H2_SCAN_LIMIT = 20_000;
    private static final String LIST_COLUMNS = "id, queue, kind, status, attempt, max_attempts, idempotency_key,"
            + " reference, run_at, created_at, finished_at, last_error, cancel_requested, lease_owner";

    private final JdbcTemplate jdbc;
    /** For searches: the same database with a query timeout, so no search holds a connection long. */
    private final JdbcTemplate searchJdbc;

    private final String dialect;
    private final JsonMapper mapper;

    /**
     * @param jdbc the application's JDBC template, on the engine's database
     * @param dbTasks the engine, for its dialect
     * @param mapper for payloads on H2
     * @param searchTimeout the longest a task search may take ({@code dbtasks.dashboard.search-timeout},
     *     default 15 s), in whole seconds
     */
    public DashboardStore(
            JdbcTemplate jdbc,
            DbTasks dbTasks,
            JsonMapper mapper,
            @org.springframework.beans.factory.annotation.Value("${dbtasks.dashboard.search-timeout:15s}")
                    java.time.Duration searchTimeout) {
        this.jdbc = jdbc;
        this.searchJdbc = new JdbcTemplate(jdbc.getDataSource());
        this.searchJdbc.setQueryTimeout((int) Math.max(1, searchTimeout.toSeconds()));
        this.dialect = dbTasks.dialect();
        this.mapper = mapper;
    }

    /** @return {@code postgresql}, {@code mariadb} or {@code h2} */
    public String dialect() {
        return dialect;
    }

    /** One task in a list: everything but the payload. */
    public record TaskRow(
            long id,
            String queue,
            String kind,
            TaskStatus status,
            int attempt,
            int maxAttempts,
            String key,
            String reference,
            Instant runAt,
            Instant createdAt,
            Instant finishedAt,
            String lastError,
            boolean cancelRequested,
            String leaseOwner) {}

    /**
     * One page of a keyset listing.
     *
     * @param rows the tasks, newest first
     * @param next the cursor of the next page, or {@code null} at the end
     * @param scanLimited whether an H2 payload search stopped at its scan limit (more may match)
     */
    public record TaskPage(List<TaskRow> rows, Long next, boolean scanLimited) {}

    /**
     * @param search the filter
     * @param before the cursor: only ids below it; {@code null} for the first page
     * @param size rows per page
     * @return the page
     */
    public TaskPage list(TaskSearch search, Long before, int size) {
        if (search.payloadPath() != null && "h2".equals(dialect)) {
            return listScanningPayloads(search, before, size);
        }
        List<Object> args = new ArrayList<>();
        String from = from(search, args);
        String where = where(search, before, args, true);
        args.add(size + 1);
        List<TaskRow> rows = searchJdbc.query(
                "SELECT " + LIST_COLUMNS + from + where + " ORDER BY id DESC " + limit(),
                (rs, n) -> row(rs),
                args.toArray());
        Long next = null;
        if (rows.size() > size) {
            rows = rows.subList(0, size);
            next = rows.get(size - 1).id();
        }
        return new TaskPage(List.copyOf(rows), next, false);
    }

    private TaskPage listScanningPayloads(TaskSearch search, Long before, int size) {
        Predicate<String> matches = payloadMatcher(search);
        List<TaskRow> found = new ArrayList<>();
        Long cursor = before;
        int scanned = 0;
        while (scanned < H2_SCAN_LIMIT) {
            List<Object> args = new ArrayList<>();
            String where = where(search, cursor, args, false);
            args.add(500);
            List<Object[]> batch = searchJdbc.query(
                    "SELECT " + LIST_COLUMNS + ", payload FROM dbtasks_task" + where + " ORDER BY id DESC " + limit(),
                    (rs, n) -> new Object[] {row(rs), rs.getString("payload")},
                    args.toArray());
            for (Object[] r : batch) {
                TaskRow row = (TaskRow) r[0];
                scanned++;
                cursor = row.id();
                if (matches.test((String) r[1])) {
                    found.add(row);
                    if (found.size() > size) {
                        return new TaskPage(
                                List.copyOf(found.subList(0, size)),
                                found.get(size - 1).id(),
                                false);
                    }
                }
            }
            if (batch.size() < 500) {
                return new TaskPage(List.copyOf(found), null, false);
            }
        }
        return new TaskPage(List.copyOf(found), cursor, true);
    }

    /** @return whether a payload (JSON text) has the search's value at its path; Java side, for H2 */
    Predicate<String> payloadMatcher(TaskSearch search) {
        return payload -> {
            if (payload == null) {
                return false;
            }
            try {
                JsonNode node = mapper.readTree(payload);
                for (String seg : search.payloadPath()) {
                    node = node.isArray() && seg.matches("[0-9]+") ? node.path(Integer.parseInt(seg)) : node.path(seg);
                }
                return !node.isMissingNode()
                        && !node.isNull()
                        && node.isValueNode()
                        && search.payloadValue().equals(node.asString());
            } catch (RuntimeException e) {
                return false;
            }
        };
    }

    /**
     * One step of a walk over a filter.
     *
     * @param ids the matching ids, newest first
     * @param lastScanned the lowest id looked at (the next cursor), or {@code null} at the end
     */
    public record IdBatch(List<Long> ids, Long lastScanned) {}

    /**
     * Ids of the tasks a filter matches below a cursor, newest first, looking at up to {@code size}
     * rows; the bulk actions walk a filter with it.
     */
    public IdBatch ids(TaskSearch search, Long before, int size) {
        boolean inJava = search.payloadPath() != null && "h2".equals(dialect);
        Predicate<String> matches = inJava ? payloadMatcher(search) : p -> true;
        List<Object> args = new ArrayList<>();
        String from = inJava ? " FROM dbtasks_task" : from(search, args);
        String where = where(search, before, args, !inJava);
        args.add(size);
        List<Long> ids = new ArrayList<>();
        Long[] last = {null};
        int[] seen = {0};
        searchJdbc.query(
                "SELECT id" + (inJava ? ", payload" : "") + " FROM dbtasks_task" + where + " ORDER BY id DESC "
                        + limit(),
                (ResultSet rs) -> {
                    seen[0]++;
                    last[0] = rs.getLong(1);
                    if (!inJava || matches.test(rs.getString(2))) {
                        ids.add(rs.getLong(1));
                    }
                },
                args.toArray());
        return new IdBatch(ids, seen[0] < size ? null : last[0]);
    }

    /**
     * Counts the tasks a filter matches: one {@code count(*)}, run only when an operator asks for a
     * bulk action's preview, never per page load.
     */
    public long count(TaskSearch search) {
        if (search.payloadPath() != null && "h2".equals(dialect)) {
            long n = 0;
            Long cursor = null;
            do {
                IdBatch batch = ids(search, cursor, 1000);
                n += batch.ids().size();
                cursor = batch.lastScanned();
            } while (cursor != null);
            return n;
        }
        List<Object> args = new ArrayList<>();
        String from = from(search, args);
        String where = where(search, null, args, true);
        Long n = searchJdbc.queryForObject("SELECT COUNT(*)" + from + where, Long.class, args.toArray());
        return n == null ? 0 : n;
    }

    private String limit() {
        return "LIMIT ?";
    }

    private String where(TaskSearch s, Long before, List<Object> args, boolean payloadInSql) {
        List<String> c = new ArrayList<>();
        if (s.id() != null) {
            c.add("id = ?");
            args.add(s.id());
        }
        if (before != null) {
            c.add("id < ?");
            args.add(before);
        }
        if (s.status() != null) {
            c.add("status = ?");
            args.add(s.status().name());
        }
        if (s.queue() != null) {
            c.add("queue = ?");
            args.add(s.queue());
        }
        if (s.kind() != null) {
            c.add("kind = ?");
            args.add(s.kind());
        }
        if (s.key() != null) {
            c.add("idempotency_key = ?");
            args.add(s.key());
        }
        if (s.reference() != null) {
            c.add("reference = ?");
            args.add(s.reference());
        }
        if (s.createdFrom() != null || s.createdTo() != null) {
            long[] bounds = idBounds(s.createdFrom(), s.createdTo());
            if (bounds[0] > Long.MIN_VALUE) {
                c.add("id >= ?");
                args.add(bounds[0]);
            }
            if (bounds[1] < Long.MAX_VALUE) {
                c.add("id < ?");
                args.add(bounds[1]);
            }
        }
        if (s.createdFrom() != null) {
            c.add("created_at >= ?");
            args.add(timestamp(s.createdFrom()));
        }
        if (s.createdTo() != null) {
            c.add("created_at < ?");
            args.add(timestamp(s.createdTo()));
        }
        if (s.payloadPath() != null && payloadInSql) {
            if ("postgresql".equals(dialect)) {
                List<String> containment = containment(s);
                if (!containment.isEmpty() && !payloadIndexed()) { // else from() applied it
                    // Lets an optional GIN index on (payload::jsonb) serve the search (docs/server.md); the
                    // exact path comparison below decides.
                    c.add("("
                            + String.join(
                                    " OR ",
                                    containment.stream()
                                            .map(x -> "payload::jsonb @> ?::jsonb")
                                            .toList()) + ")");
                    args.addAll(containment);
                }
                c.add("payload::jsonb #>> ?::text[] = ?");
                args.add("{" + String.join(",", s.payloadPath()) + "}");
            } else {
                c.add("JSON_UNQUOTE(JSON_EXTRACT(payload, ?)) = ?");
                StringBuilder p = new StringBuilder("$");
                for (String seg : s.payloadPath()) {
                    p.append(seg.matches("[0-9]+") ? "[" + seg + "]" : ".\"" + seg + "\"");
                }
                args.add(p.toString());
            }
            args.add(s.payloadValue());
        }
        return c.isEmpty() ? "" : " WHERE " + String.join(" AND ", c);
    }

    /**
     * The FROM clause. On PostgreSQL with a GIN index on the payload, a payload search first selects
     * the containing rows through the index in a subquery kept apart from the outer {@code ORDER BY
     * id DESC LIMIT} by {@code OFFSET 0} (the planner does not flatten it): otherwise the planner,
     * expecting many matches, walks the primary key backwards and reads the whole table when the
     * value is rare.
     */
    private String from(TaskSearch s, List<Object> args) {
        if (s.payloadPath() == null || !"postgresql".equals(dialect) || !payloadIndexed()) {
            return " FROM dbtasks_task";
        }
        List<String> containment = containment(s);
        if (containment.isEmpty()) {
            return " FROM dbtasks_task";
        }
        args.addAll(containment);
        return " FROM (SELECT * FROM dbtasks_task WHERE "
                + String.join(
                        " OR ",
                        containment.stream()
                                .map(x -> "payload::jsonb @> ?::jsonb")
                                .toList())
                + " OFFSET 0) dbtasks_task";
    }

    private volatile long indexCheckedAt = Long.MIN_VALUE;
    private volatile boolean payloadIndexed;

    /** @return whether the task table has a GIN index (on PostgreSQL), checked at most once a minute */
    boolean payloadIndexed() {
        if (!"postgresql".equals(dialect)) {
            return false;
        }
        long now = System.nanoTime();
        if (indexCheckedAt == Long.MIN_VALUE || now - indexCheckedAt > 60_000_000_000L) {
            Boolean found = jdbc.queryForObject(
                    "SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid"
                            + " JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_am a ON a.oid = x.relam"
                            + " WHERE t.relname = 'dbtasks_task' AND a.amname = 'gin'"
                            + " AND t.relnamespace = to_regnamespace(current_schema())::oid)",
                    Boolean.class);
            payloadIndexed = Boolean.TRUE.equals(found);
            indexCheckedAt = now;
        }
        return payloadIndexed;
    }

    /**
     * The JSON documents a payload must contain for the search to match, one per way the value may be
     * typed (always as a string; also as a number, boolean or null when it reads as one); empty when
     * the path indexes into an array, which containment cannot say.
     */
    List<String> containment(TaskSearch s) {
        if (s.payloadPath().stream().anyMatch(seg -> seg.matches("[0-9]+"))) {
            return List.of();
        }
        List<String> values = new ArrayList<>();
        values.add(mapper.writeValueAsString(s.payloadValue()));
        String v = s.payloadValue().trim();
        if (v.equals(s.payloadValue())) {
            if (v.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?")) {
                values.add(v);
            } else if (v.equals("true") || v.equals("false")) {
                values.add(v);
            }
        }
        List<String> docs = new ArrayList<>();
        for (String value : values) {
            String doc = value;
            for (int i = s.payloadPath().size() - 1; i >= 0; i--) {
                doc = "{" + mapper.writeValueAsString(s.payloadPath().get(i)) + ":" + doc + "}";
            }
            docs.add(doc);
        }
        return docs;
    }

    /**
     * Turns a creation-time range into an id range, so a time filter walks only the ids created in
     * it instead of the whole primary key: a binary search over the primary key ({@code created_at}
     * of the first task at or above an id), about 25 point reads at 10M rows. Ids and creation times
     * rise together (both are taken by the enqueue statement); a margin of {@value #TIME_MARGIN_MINUTES}
     * minute(s) covers transactions that commit out of order, and the exact {@code created_at}
     * predicates still decide.
     *
     * @return the lowest id to look at and the id to stay below; {@code Long.MIN_VALUE}/{@code
     *     Long.MAX_VALUE} for an open side
     */
    long[] idBounds(Instant from, Instant to) {
        long low = Long.MIN_VALUE;
        long high = Long.MAX_VALUE;
        if (from != null) {
            low = firstIdCreatedAtOrAfter(from.minus(java.time.Duration.ofMinutes(TIME_MARGIN_MINUTES)));
        }
        if (to != null) {
            high = firstIdCreatedAtOrAfter(to.plus(java.time.Duration.ofMinutes(TIME_MARGIN_MINUTES)));
        }
        return new long[] {low, high};
    }

    static final int TIME_MARGIN_MINUTES = 1;

    private long firstIdCreatedAtOrAfter(Instant t) {
        Long min = jdbc.queryForObject("SELECT MIN(id) FROM dbtasks_task", Long.class);
        Long max = jdbc.queryForObject("SELECT MAX(id) FROM dbtasks_task", Long.class);
        if (min == null || max == null) {
            return Long.MIN_VALUE;
        }
        long lo = min;
        long hi = max + 1;
        while (lo < hi) {
            long mid = lo + (hi - lo) / 2;
            Object[] row = jdbc.query(
                    "SELECT id, created_at FROM dbtasks_task WHERE id >= ? ORDER BY id " + limit(),
                    rs -> rs.next() ? new Object[] {rs.getLong(1), instant(rs, "created_at")} : null,
                    mid,
                    1);
            if (row == null) {
                hi = mid;
            } else if (!((Instant) row[1]).isBefore(t)) {
                hi = mid;
            } else {
                lo = (Long) row[0] + 1;
            }
        }
        return lo;
    }

    /** A bind value for a timestamp column of this dialect (MariaDB stores UTC DATETIME). */
    Object timestamp(Instant t) {
        if ("mariadb".equals(dialect)) {
            return LocalDateTime.ofInstant(t, ZoneOffset.UTC);
        }
        return OffsetDateTime.ofInstant(t, ZoneOffset.UTC);
    }

    Instant instant(ResultSet rs, String column) throws SQLException {
        if ("mariadb".equals(dialect)) {
            LocalDateTime t = rs.getObject(column, LocalDateTime.class);
            return t == null ? null : t.toInstant(ZoneOffset.UTC);
        }
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    private TaskRow row(ResultSet rs) throws SQLException {
        return new TaskRow(
                rs.getLong("id"),
                rs.getString("queue"),
                rs.getString("kind"),
                TaskStatus.valueOf(rs.getString("status")),
                rs.getInt("attempt"),
                rs.getInt("max_attempts"),
                rs.getString("idempotency_key"),
                rs.getString("reference"),
                instant(rs, "run_at"),
                instant(rs, "created_at"),
                instant(rs, "finished_at"),
                abbreviate(rs.getString("last_error"), 200),
                rs.getBoolean("cancel_requested"),
                rs.getString("lease_owner"));
    }

    static String abbreviate(String s, int max) {
        return s == null || s.length() <= max ? s : s.substring(0, max - 1) + "…";
    }

    // --- overview ---------------------------------------------------------------------------------

    /** Tasks of one state in one queue, and for PENDING the earliest due time. */
    public record StateCount(String queue, TaskStatus status, long count, Instant earliestRunAt) {}

    /**
     * The one aggregate behind the overview: counts by queue and state, and the earliest run time of
     * each queue's PENDING tasks. A full scan on a large table, so {@link OverviewSnapshots} runs it
     * in the background at an interval, never per page load.
     */
    public List<StateCount> countByQueueAndState() {
        return jdbc.query(
                "SELECT queue, status, COUNT(*) AS n, MIN(CASE WHEN status = 'PENDING' THEN run_at END) AS earliest"
                        + " FROM dbtasks_task GROUP BY queue, status",
                (rs, i) -> new StateCount(
                        rs.getString("queue"),
                        TaskStatus.valueOf(rs.getString("status")),
                        rs.getLong("n"),
                        instant(rs, "earliest")));
    }

    /** Attempts finished per minute, by outcome group. */
    public record MinuteOutcomes(long minute, long succeeded, long failed) {}

    /** @return the highest attempt id, 0 when there are none */
    public long maxAttemptId() {
        Long n = jdbc.queryForObject("SELECT MAX(id) FROM dbtasks_attempt", Long.class);
        return n == null ? 0 : n;
    }

    /**
     * Attempts with {@code after < id <= upTo}, finished at or after {@code since}, counted per
     * minute (epoch minute of {@code finished_at}): by primary-key range, so each refresh reads only
     * the attempts written since the last one.
     */
    public List<MinuteOutcomes> outcomesPerMinute(long after, long upTo, Instant since) {
        String minute = switch (dialect) {
            case "mariadb" -> "TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', finished_at)";
            default -> "CAST(FLOOR(EXTRACT(EPOCH FROM finished_at) / 60) AS BIGINT)";
        };
        return jdbc.query(
                "SELECT " + minute + " AS m,"
                        + " SUM(CASE WHEN outcome = 'SUCCEEDED' THEN 1 ELSE 0 END) AS ok,"
                        + " SUM(CASE WHEN outcome IN ('FAILED', 'TIMED_OUT', 'LEASE_EXPIRED') THEN 1 ELSE 0 END) AS bad"
                        + " FROM dbtasks_attempt WHERE id > ? AND id <= ? AND finished_at >= ? GROUP BY " + minute,
                (rs, i) -> new MinuteOutcomes(rs.getLong("m"), rs.getLong("ok"), rs.getLong("bad")),
                after,
                upTo,
                timestamp(since));
    }

    /** @return the database's clock */
    public Instant databaseNow() {
        String sql = switch (dialect) {
            case "mariadb" -> "SELECT UTC_TIMESTAMP(6)";
            case "postgresql" -> "SELECT clock_timestamp()";
            default -> "SELECT CURRENT_TIMESTAMP(6)";
        };
        return jdbc.query(sql, rs -> {
            rs.next();
            if ("mariadb".equals(dialect)) {
                return rs.getObject(1, LocalDateTime.class).toInstant(ZoneOffset.UTC);
            }
            return rs.getObject(1, OffsetDateTime.class).toInstant();
        });
    }

    // --- locks, guards, inbox ---------------------------------------------------------------------

    /** @return up to {@code limit} rows of a read-only table view, as column name to value */
    public List<Map<String, Object>> locks(int limit) {
        return rows(
                "SELECT name, token, owner, acquired_at, expires_at FROM dbtasks_lock ORDER BY acquired_at DESC",
                limit,
                "acquired_at",
                "expires_at");
    }

    public List<Map<String, Object>> guards(int limit) {
        return rows(
                "SELECT once_key, status, token, owner, runs, started_at, finished_at, duration_ms, last_error,"
                        + " lease_expires_at FROM dbtasks_once ORDER BY updated_at DESC",
                limit,
                "started_at",
                "finished_at",
                "lease_expires_at");
    }

    public List<Map<String, Object>> inbox(int limit) {
        return rows(
                "SELECT consumer, message_id, received_at FROM dbtasks_inbox ORDER BY received_at DESC",
                limit,
                "received_at");
    }

    /** One row of {@code dbtasks_batch}, newest first. */
    public record BatchRow(long id, String kind, String name, int chunks, Instant createdAt) {}

    /**
     * The newest batches (the core API finds a batch by id but does not list them).
     *
     * @param limit at most this many
     * @return the batches, newest first
     */
    public List<BatchRow> batches(int limit) {
        return jdbc.query(
                "SELECT id, kind, name, chunks, created_at FROM dbtasks_batch ORDER BY id DESC " + limit(),
                (rs, i) -> new BatchRow(
                        rs.getLong("id"),
                        rs.getString("kind"),
                        rs.getString("name"),
                        rs.getInt("chunks"),
                        instant(rs, "created_at")),
                limit);
    }

    private List<Map<String, Object>> rows(String sql, int limit, String... timeColumns) {
        List<String> times = List.of(timeColumns);
        return jdbc.query(
                sql + " " + limit(),
                (rs, i) -> {
                    Map<String, Object> m = new java.util.LinkedHashMap<>();
                    var md = rs.getMetaData();
                    for (int c = 1; c <= md.getColumnCount(); c++) {
                        String name = md.getColumnLabel(c).toLowerCase(java.util.Locale.ROOT);
                        m.put(name, times.contains(name) ? instant(rs, name) : rs.getObject(c));
                    }
                    return m;
                },
                limit);
    }
}
