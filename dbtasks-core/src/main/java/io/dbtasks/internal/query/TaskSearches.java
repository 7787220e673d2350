package io.dbtasks.internal.query;

import io.dbtasks.AttemptsPerMinute;
import io.dbtasks.QueueStateCount;
import io.dbtasks.Task;
import io.dbtasks.TaskIds;
import io.dbtasks.TaskQuery;
import io.dbtasks.TaskSlice;
import io.dbtasks.TaskStatus;
import io.dbtasks.TaskSummary;
import io.dbtasks.ToolTable;
import io.dbtasks.internal.completion.HistoryCounts;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.dialect.PayloadSql;
import io.dbtasks.internal.support.Jdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Keyset task searches, the overview aggregates and the toolkit's read-only views.
 *
 * <p>Paging is by keyset on the primary key, newest first ({@code id < cursor ORDER BY id DESC
 * LIMIT n}): each page costs the same however deep it is, where {@code OFFSET} would read and throw
 * away every earlier row. Filters by state use the partial indexes the core keeps (PENDING: the
 * claim index, RUNNING: the rescue index, FAILED and CANCELLED: their own; SUCCEEDED walks the
 * primary key), a reference uses {@code dbtasks_task_reference_idx} (migration V10), a key the
 * unique key index; a creation-time range is turned into an id range first ({@link #idBounds}).
 *
 * <p>Payload search runs in SQL where the dialect has JSON path functions ({@link
 * Dialect#payloadSql}); elsewhere (H2) the rows the other filters select are read in batches and
 * matched in Java, at most {@value #SCAN_LIMIT} per page.
 *
 * <p>Thread-safe.
 */
public final class TaskSearches {
    /** The most rows one page of a payload search matched in Java reads. */
    public static final int SCAN_LIMIT = 20_000;

    private static final int SCAN_BATCH = 500;
    /** Minutes of margin around a creation-time range turned into ids (transactions commit out of order). */
    static final int TIME_MARGIN_MINUTES = 1;

    private static final String SUMMARY_COLUMNS = "id, queue, kind, status, attempt, max_attempts,"
            + " idempotency_key, reference, run_at, created_at, finished_at, last_error, cancel_requested,"
            + " lease_owner, concurrency_key";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final TaskRows rows;
    private final HistoryCounts history;

    TaskSearches(Jdbc jdbc, Dialect dialect) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.rows = new TaskRows(dialect);
        this.history = new HistoryCounts(dialect);
    }

    /** Reads one row of a search result. */
    private interface Reader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    public TaskSlice<Task> tasks(TaskQuery query, int size) {
        return slice(query, size, Dialect.TASK_COLUMNS, rows::task, Task::id);
    }

    public TaskSlice<TaskSummary> summaries(TaskQuery query, int size) {
        return slice(query, size, SUMMARY_COLUMNS, this::summary, TaskSummary::id);
    }

    private <T> TaskSlice<T> slice(
            TaskQuery query, int size, String columns, Reader<T> reader, ToLongFunction<T> idOf) {
        checkSize(size);
        return jdbc.withConnection("Search tasks", query.timeout(), c -> {
            if (inJava(query)) {
                return scanPayloads(c, query, size, columns, reader, idOf);
            }
            Statement s = statement(c, query, query.before(), true);
            s.args.add(size + 1);
            List<T> found = new ArrayList<>();
            try (PreparedStatement ps = prepare(
                    c, query, "SELECT " + columns + " FROM " + s.source + s.where + " ORDER BY id DESC LIMIT ?")) {
                bind(ps, s.args);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        found.add(reader.read(rs));
                    }
                }
            }
            if (found.size() <= size) {
                return new TaskSlice<>(found, null, false);
            }
            List<T> page = found.subList(0, size);
            return new TaskSlice<>(page, idOf.applyAsLong(page.get(size - 1)), false);
        });
    }

    private <T> TaskSlice<T> scanPayloads(
            Connection c, TaskQuery query, int size, String columns, Reader<T> reader, ToLongFunction<T> idOf)
            throws SQLException {
        Predicate<String> matches = payloadMatcher(query.payloadPath(), query.payloadValue());
        String selected = columns.contains(" payload,") ? columns : columns + ", payload";
        List<T> found = new ArrayList<>();
        Long cursor = query.before();
        int scanned = 0;
        while (scanned < SCAN_LIMIT) {
            Statement s = statement(c, query, cursor, false);
            s.args.add(SCAN_BATCH);
            int read = 0;
            try (PreparedStatement ps = prepare(
                    c, query, "SELECT " + selected + " FROM dbtasks_task" + s.where + " ORDER BY id DESC LIMIT ?")) {
                bind(ps, s.args);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        read++;
                        scanned++;
                        cursor = rs.getLong("id");
                        if (matches.test(rs.getString("payload"))) {
                            found.add(reader.read(rs));
                            if (found.size() > size) {
                                List<T> page = found.subList(0, size);
                                return new TaskSlice<>(page, idOf.applyAsLong(page.get(size - 1)), false);
                            }
                        }
                    }
                }
            }
            if (read < SCAN_BATCH) {
                return new TaskSlice<>(found, null, false);
            }
        }
        return new TaskSlice<>(found, cursor, true);
    }

    public TaskIds ids(TaskQuery query, int size) {
        checkSize(size);
        boolean inJava = inJava(query);
        return jdbc.withConnection("Walk task ids", query.timeout(), c -> {
            Predicate<String> matches = inJava ? payloadMatcher(query.payloadPath(), query.payloadValue()) : p -> true;
            Statement s = statement(c, query, query.before(), !inJava);
            s.args.add(size);
            List<Long> ids = new ArrayList<>();
            Long last = null;
            int seen = 0;
            try (PreparedStatement ps = prepare(
                    c,
                    query,
                    "SELECT id" + (inJava ? ", payload" : "") + " FROM " + s.source + s.where
                            + " ORDER BY id DESC LIMIT ?")) {
                bind(ps, s.args);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        seen++;
                        last = rs.getLong(1);
                        if (!inJava || matches.test(rs.getString(2))) {
                            ids.add(last);
                        }
                    }
                }
            }
            return new TaskIds(ids, seen < size ? null : last);
        });
    }

    public long count(TaskQuery query) {
        if (byQueueAndFinalState(query)) {
            // From the hourly counts and the live rows, as the overview counts: its cost does not grow
            // with history.
            long n = 0;
            for (QueueStateCount q : stateCounts(query)) {
                if ((query.queue() == null || query.queue().equals(q.queue()))
                        && (query.status() == null || query.status() == q.status())) {
                    n += q.count();
                }
            }
            return n;
        }
        if (inJava(query)) {
            long n = 0;
            TaskQuery q = query;
            do {
                TaskIds batch = ids(q, 1000);
                n += batch.ids().size();
                q = batch.next() == null ? null : q.before(batch.next());
            } while (q != null);
            return n;
        }
        return jdbc.withConnection("Count tasks", query.timeout(), c -> {
            Statement s = statement(c, query, query.before(), true);
            try (PreparedStatement ps = prepare(c, query, "SELECT COUNT(*) FROM " + s.source + s.where)) {
                bind(ps, s.args);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        });
    }

    /**
     * @return whether {@code query} filters by queue and a finished state only (or by queue alone),
     *     with no cursor: what the overview's counts answer without reading history
     */
    private static boolean byQueueAndFinalState(TaskQuery query) {
        return (query.status() == null || query.status().isFinal())
                && query.kind() == null
                && query.key() == null
                && query.reference() == null
                && query.createdFrom() == null
                && query.createdTo() == null
                && query.id() == null
                && query.payloadPath() == null
                && query.before() == null
                && query.concurrencyKey() == null;
    }

    private boolean inJava(TaskQuery query) {
        return query.hasPayloadFilter() && !dialect.searchesPayloadsInSql();
    }

    private static void checkSize(int size) {
        if (size < 1 || size > 10_000) {
            throw new IllegalArgumentException("size must be 1 to 10000, got " + size);
        }
    }

    private static PreparedStatement prepare(Connection c, TaskQuery query, String sql) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        if (query.timeout() != null) {
            ps.setQueryTimeout((int)
                    Math.max(1, Math.min(Integer.MAX_VALUE, query.timeout().toSeconds())));
        }
        return ps;
    }

    /** A statement's FROM source, WHERE clause (with a leading space, or empty) and bind values. */
    private static final class Statement {
        String source = "dbtasks_task";
        String where = "";
        final List<Object> args = new ArrayList<>();
    }

    private Statement statement(Connection c, TaskQuery q, Long before, boolean payloadInSql) throws SQLException {
        Statement s = new Statement();
        List<Object> args = new ArrayList<>();
        List<String> w = new ArrayList<>();
        if (q.id() != null) {
            w.add("id = ?");
            args.add(q.id());
        }
        if (before != null) {
            w.add("id < ?");
            args.add(before);
        }
        if (q.status() != null) {
            w.add("status = ?");
            args.add(q.status().name());
        }
        if (q.queue() != null) {
            w.add("queue = ?");
            args.add(q.queue());
        }
        if (q.kind() != null) {
            w.add("kind = ?");
            args.add(q.kind());
        }
        if (q.key() != null) {
            w.add("idempotency_key = ?");
            args.add(q.key());
        }
        if (q.concurrencyKey() != null) {
            w.add("concurrency_key = ?");
            args.add(q.concurrencyKey());
        }
        if (q.reference() != null) {
            w.add("reference = ?");
            args.add(q.reference());
            Optional<String> exact = dialect.exactTextRecheck("reference");
            if (exact.isPresent()) {
                w.add(exact.get());
                args.add(q.reference());
            }
        }
        if (q.createdFrom() != null || q.createdTo() != null) {
            long[] bounds = idBounds(c, q.createdFrom(), q.createdTo());
            if (bounds[0] > Long.MIN_VALUE) {
                w.add("id >= ?");
                args.add(bounds[0]);
            }
            if (bounds[1] < Long.MAX_VALUE) {
                w.add("id < ?");
                args.add(bounds[1]);
            }
        }
        if (q.createdFrom() != null) {
            w.add("created_at >= ?");
            args.add(q.createdFrom());
            // A task created then finished on its creation day or later: the days before are not read.
            w.add(sinceDay(q.createdFrom()));
        }
        if (q.createdTo() != null) {
            w.add("created_at < ?");
            args.add(q.createdTo());
        }
        if (q.hasPayloadFilter() && payloadInSql) {
            Optional<PayloadSql> payload = dialect.payloadSql(c, q.payloadPath(), q.payloadValue());
            if (payload.isEmpty()) {
                throw new IllegalStateException("the " + dialect.name() + " dialect has no payload search in SQL");
            }
            s.source = payload.get().source();
            s.args.addAll(payload.get().sourceArgs());
            w.add(payload.get().condition());
            args.addAll(payload.get().conditionArgs());
        }
        s.args.addAll(args);
        s.where = w.isEmpty() ? "" : " WHERE " + String.join(" AND ", w);
        return s;
    }

    private void bind(PreparedStatement ps, List<Object> args) throws SQLException {
        int i = 1;
        for (Object a : args) {
            if (a instanceof Instant t) {
                dialect.setInstant(ps, i++, t);
            } else {
                ps.setObject(i++, a);
            }
        }
    }

    /** @return whether a payload (JSON text) has {@code value} at {@code path}; for H2 */
    static Predicate<String> payloadMatcher(List<String> path, String value) {
        return payload -> {
            if (payload == null) {
                return false;
            }
            try {
                JsonNode node = JSON.readTree(payload);
                for (String seg : path) {
                    node = node.isArray() && seg.matches("[0-9]+") ? node.path(Integer.parseInt(seg)) : node.path(seg);
                }
                return !node.isMissingNode() && !node.isNull() && node.isValueNode() && value.equals(node.asString());
            } catch (RuntimeException e) {
                return false;
            }
        };
    }

    /**
     * Turns a creation-time range into an id range, so a time filter walks only the ids created in
     * it instead of the whole primary key: a binary search over the primary key ({@code created_at}
     * of the first task at or above an id), a few dozen point reads however large the table. Ids
     * and creation times rise together (both are taken by the enqueue statement); a margin of
     * {@value #TIME_MARGIN_MINUTES} minute(s) covers transactions that commit out of order, and the
     * exact {@code created_at} predicates still decide.
     *
     * @return the lowest id to look at and the id to stay below; {@code Long.MIN_VALUE}/{@code
     *     Long.MAX_VALUE} for an open side
     */
    private long[] idBounds(Connection c, Instant from, Instant to) throws SQLException {
        long low = Long.MIN_VALUE;
        long high = Long.MAX_VALUE;
        if (from != null) {
            low = firstIdCreatedAtOrAfter(c, from.minus(Duration.ofMinutes(TIME_MARGIN_MINUTES)));
        }
        if (to != null) {
            high = firstIdCreatedAtOrAfter(c, to.plus(Duration.ofMinutes(TIME_MARGIN_MINUTES)));
        }
        return new long[] {low, high};
    }

    /**
     * The rows of the live partition (day 0), of the rows from before partitioning (day -1), and of
     * the days from {@code t}'s on. Every task created at or after {@code t} is among them, and the
     * ids among them still rise with creation time. The day is written into the statement (an
     * integer computed here, not input), so that PostgreSQL prunes the other days' partitions when
     * it plans the statement rather than planning every partition first.
     */
    static String sinceDay(Instant t) {
        return "(history_day <= 0 OR history_day >= " + Dialect.historyDayOf(t) + ")";
    }

    private long firstIdCreatedAtOrAfter(Connection c, Instant t) throws SQLException {
        long min;
        long max;
        // Only the partitions that can hold a task created at or after t: a few point reads per
        // step however many days of history there are. The ends are read in id order, not as MIN and
        // MAX: over a partitioned table MariaDB answers those by scanning a whole index of each
        // partition.
        String ends = "SELECT id FROM dbtasks_task WHERE " + sinceDay(t) + " ORDER BY id";
        try (PreparedStatement ps = c.prepareStatement("SELECT (" + ends + " LIMIT 1), (" + ends + " DESC LIMIT 1)")) {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                min = rs.getLong(1);
                if (rs.wasNull()) {
                    return Long.MIN_VALUE;
                }
                max = rs.getLong(2);
            }
        }
        long lo = min;
        long hi = max + 1;
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT id, created_at FROM dbtasks_task WHERE id >= ? AND " + sinceDay(t) + " ORDER BY id LIMIT ?")) {
            while (lo < hi) {
                long mid = lo + (hi - lo) / 2;
                ps.setLong(1, mid);
                ps.setInt(2, 1);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        hi = mid;
                    } else if (!dialect.getInstant(rs, "created_at").isBefore(t)) {
                        hi = mid;
                    } else {
                        lo = rs.getLong("id") + 1;
                    }
                }
            }
        }
        return lo;
    }

    private TaskSummary summary(ResultSet rs) throws SQLException {
        return new TaskSummary(
                rs.getLong("id"),
                rs.getString("queue"),
                rs.getString("kind"),
                TaskStatus.valueOf(rs.getString("status")),
                rs.getInt("attempt"),
                rs.getInt("max_attempts"),
                rs.getString("idempotency_key"),
                rs.getString("reference"),
                dialect.getInstant(rs, "run_at"),
                dialect.getInstant(rs, "created_at"),
                dialect.getInstant(rs, "finished_at"),
                rs.getString("last_error"),
                rs.getBoolean("cancel_requested"),
                rs.getString("lease_owner"),
                rs.getString("concurrency_key"));
    }

    // --- overview ---------------------------------------------------------------------------------

    /**
     * Task counts by queue and state without scanning history: the live states (PENDING, RUNNING,
     * WAITING) counted from the task table, one index range per state, the finished ones
     * from the hourly counts ({@code dbtasks_history_count}) before the end of the newest counted
     * hour plus the finished rows at or after it, one range of the (status, finished_at) index per
     * state (on MariaDB and H2 the index also holds the queue, so the range is read alone). Until an
     * hour is counted, the finished rows are counted from the task table whole. One
     * statement, so one snapshot: a rollup or a subtraction committing meanwhile is seen whole or
     * not at all.
     *
     * @return one entry per (queue, state) with tasks, in no particular order
     */
    public List<QueueStateCount> stateCounts() {
        return stateCounts(null);
    }

    /**
     * {@link #stateCounts()} within the statement time limit of {@code limitedBy} ({@code null}, or
     * no limit set: the engine's own).
     */
    private List<QueueStateCount> stateCounts(@Nullable TaskQuery limitedBy) {
        Duration timeout = limitedBy == null ? null : limitedBy.timeout();
        return jdbc.withConnection("Count tasks by queue and state", timeout, c -> {
            Instant countedUpTo = history.countedUpTo(c);
            // One branch per state, its literal inlined, so that each reads its own index (PostgreSQL:
            // the partial claim, rescue and waiting indexes) and never the finished rows.
            StringBuilder sql = new StringBuilder("SELECT queue, status, COUNT(*) AS n, MIN(run_at) AS earliest"
                    + " FROM dbtasks_task WHERE " + Dialect.LIVE + " AND status = " + Dialect.status(TaskStatus.PENDING)
                    + " GROUP BY queue, status");
            for (TaskStatus live : List.of(TaskStatus.RUNNING, TaskStatus.WAITING)) {
                sql.append(" UNION ALL SELECT queue, status, COUNT(*), NULL FROM dbtasks_task WHERE ")
                        .append(Dialect.LIVE)
                        .append(" AND status = ")
                        .append(Dialect.status(live))
                        .append(" GROUP BY queue, status");
            }
            if (countedUpTo != null) {
                sql.append(" UNION ALL SELECT queue, status, SUM(n), NULL FROM dbtasks_history_count"
                        + " WHERE hour_start < ? GROUP BY queue, status");
            }
            for (TaskStatus status : HistoryCounts.FINISHED) {
                // The state inlined, so PostgreSQL matches the partial finished-task index.
                sql.append(" UNION ALL SELECT queue, status, COUNT(*), NULL FROM dbtasks_task WHERE status = ")
                        .append(Dialect.status(status))
                        // The day bound lets a partitioned table read only the days not counted yet, plus
                        // the rows from before partitioning (day -1, finished at any time) and day 0,
                        // pruned when the statement is planned.
                        .append(countedUpTo == null ? "" : " AND finished_at >= ? AND " + sinceDay(countedUpTo))
                        .append(" GROUP BY queue, status");
            }
            Map<String, long[]> totals = new LinkedHashMap<>();
            Map<String, Instant> earliest = new java.util.HashMap<>();
            try (PreparedStatement ps =
                    limitedBy == null ? c.prepareStatement(sql.toString()) : prepare(c, limitedBy, sql.toString())) {
                if (countedUpTo != null) {
                    for (int i = 1; i <= 1 + HistoryCounts.FINISHED.size(); i++) {
                        dialect.setInstant(ps, i, countedUpTo);
                    }
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String key = rs.getString(2) + ' ' + rs.getString(1);
                        totals.computeIfAbsent(key, k -> new long[1])[0] += rs.getLong(3);
                        Instant first = dialect.getInstant(rs, "earliest");
                        if (first != null) {
                            earliest.put(key, first);
                        }
                    }
                }
            }
            List<QueueStateCount> out = new ArrayList<>();
            totals.forEach((key, n) -> {
                if (n[0] > 0) {
                    int space = key.indexOf(' ');
                    out.add(new QueueStateCount(
                            key.substring(space + 1),
                            TaskStatus.valueOf(key.substring(0, space)),
                            n[0],
                            earliest.get(key)));
                }
            });
            return out;
        });
    }

    public long maxAttemptId() {
        return jdbc.withConnection("Find the newest attempt", c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT MAX(id) FROM dbtasks_attempt");
                    ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        });
    }

    public List<AttemptsPerMinute> attemptsPerMinute(long after, long upTo, Instant since) {
        String minute = dialect.epochMinute("finished_at");
        return jdbc.withConnection("Count attempts per minute", c -> {
            List<AttemptsPerMinute> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT " + minute + " AS m,"
                    + " SUM(CASE WHEN outcome = 'SUCCEEDED' THEN 1 ELSE 0 END) AS ok,"
                    + " SUM(CASE WHEN outcome IN ('FAILED', 'TIMED_OUT', 'LEASE_EXPIRED') THEN 1 ELSE 0 END) AS bad"
                    + " FROM dbtasks_attempt WHERE id > ? AND id <= ? AND finished_at >= ? GROUP BY " + minute)) {
                ps.setLong(1, after);
                ps.setLong(2, upTo);
                dialect.setInstant(ps, 3, since);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(new AttemptsPerMinute(rs.getLong("m"), rs.getLong("ok"), rs.getLong("bad")));
                    }
                }
            }
            return out;
        });
    }

    public Instant databaseNow() {
        return jdbc.withConnection("Read the database clock", c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT " + dialect.now() + " AS db_now");
                    ResultSet rs = ps.executeQuery()) {
                rs.next();
                return dialect.getInstant(rs, "db_now");
            }
        });
    }

    // --- the toolkit's tables -----------------------------------------------------------------------

    public List<Map<String, Object>> recentRows(ToolTable table, int limit) {
        if (limit < 1 || limit > 10_000) {
            throw new IllegalArgumentException("limit must be 1 to 10000, got " + limit);
        }
        String sql = switch (table) {
            case LOCKS ->
                "SELECT name, token, owner, acquired_at, expires_at FROM dbtasks_lock" + " ORDER BY acquired_at DESC";
            case GUARDS ->
                "SELECT once_key, status, token, owner, runs, started_at, finished_at, duration_ms,"
                        + " last_error, lease_expires_at FROM dbtasks_once ORDER BY updated_at DESC";
            case INBOX -> "SELECT consumer, message_id, received_at FROM dbtasks_inbox ORDER BY received_at DESC";
            case BATCHES -> "SELECT id, kind, name, chunks, created_at FROM dbtasks_batch ORDER BY id DESC";
        };
        List<String> times = List.of(
                "acquired_at",
                "expires_at",
                "started_at",
                "finished_at",
                "lease_expires_at",
                "received_at",
                "created_at");
        return jdbc.withConnection("Read " + table.name().toLowerCase(Locale.ROOT), c -> {
            List<Map<String, Object>> out = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(sql + " LIMIT ?")) {
                ps.setInt(1, limit);
                try (ResultSet rs = ps.executeQuery()) {
                    var md = rs.getMetaData();
                    while (rs.next()) {
                        Map<String, Object> m = new LinkedHashMap<>();
                        for (int i = 1; i <= md.getColumnCount(); i++) {
                            String name = md.getColumnLabel(i).toLowerCase(Locale.ROOT);
                            m.put(name, times.contains(name) ? dialect.getInstant(rs, name) : rs.getObject(i));
                        }
                        out.add(m);
                    }
                }
            }
            return out;
        });
    }
}
