package io.dbtasks.internal.dialect;

import io.dbtasks.TaskStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * MariaDB 10.6+ (SKIP LOCKED and sequences). Claims in one READ COMMITTED transaction: {@code SELECT
 * ... FOR UPDATE SKIP LOCKED} locks due rows no other claimer holds, one UPDATE marks them RUNNING
 * with a token from {@code dbtasks_token_seq}, and a SELECT reads them back (MariaDB has no {@code
 * UPDATE ... RETURNING}). Times are UTC {@code DATETIME(6)} from {@code UTC_TIMESTAMP(6)}, so the
 * session time zone does not matter.
 *
 * <p>The task and attempt tables are partitioned by RANGE of history day (migration V30): {@code
 * p_legacy} (day -1), {@code p_live} (day 0), then one partition per day, {@code pYYYYMMDD}, whose
 * bound is the next day. Partitions are added after the last one and dropped with {@code ALTER
 * TABLE}, which needs the ALTER and DROP privileges on both tables.
 */
public final class MariaDbDialect implements Dialect {
    private final boolean galera;

    /** A MariaDB server without Galera: tokens from the sequence {@code dbtasks_token_seq}. */
    public MariaDbDialect() {
        this(false);
    }

    /**
     * @param galera whether the server is a Galera node ({@code wsrep_on}): tokens then come from
     *     {@code dbtasks_next_token()}, a certified row update, not from the sequence, whose draws
     *     Galera does not certify (see {@link GaleraSchema})
     */
    public MariaDbDialect(boolean galera) {
        this.galera = galera;
    }

    /** @return whether this dialect is for a Galera node */
    public boolean galera() {
        return galera;
    }

    /** MariaDB 10.3+ ({@code idle_transaction_timeout}, whole seconds, rounded up). */
    @Override
    public Optional<String> idleInTransactionLimit(java.time.Duration limit) {
        long seconds = Math.max(1, (limit.toMillis() + 999) / 1000);
        return Optional.of("SET SESSION idle_transaction_timeout = " + seconds);
    }

    @Override
    public String name() {
        return "mariadb";
    }

    @Override
    public String historyDay(String timestamp) {
        return "(TO_DAYS(" + timestamp + ") - 719528)";
    }

    @Override
    public String now() {
        return "UTC_TIMESTAMP(6)";
    }

    @Override
    public String nowPlusMillis() {
        return "TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(6))";
    }

    @Override
    public String nextToken() {
        return galera ? GaleraSchema.NEXT_TOKEN : "NEXTVAL(dbtasks_token_seq)";
    }

    @Override
    public void setInstant(PreparedStatement ps, int index, Instant value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.TIMESTAMP);
        } else {
            ps.setObject(index, LocalDateTime.ofInstant(value, ZoneOffset.UTC));
        }
    }

    @Override
    public Instant getInstant(ResultSet rs, String column) throws SQLException {
        LocalDateTime t = rs.getObject(column, LocalDateTime.class);
        return t == null ? null : t.toInstant(ZoneOffset.UTC);
    }

    @Override
    public <T> List<T> claim(
            Connection c,
            String queue,
            Claimable claimable,
            int limit,
            String owner,
            long leaseMillis,
            RowReader<T> reader)
            throws SQLException {
        int isolation = c.getTransactionIsolation();
        // READ COMMITTED: no gap locks, so claimers and enqueuers do not block each other.
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        c.setAutoCommit(false);
        try {
            List<Long> ids = DueIds.read(
                    c,
                    this,
                    "SELECT id FROM dbtasks_task WHERE " + dueCondition(claimable) + " ORDER BY " + CLAIM_ORDER
                            + " LIMIT ? FOR UPDATE SKIP LOCKED",
                    queue,
                    claimable,
                    limit);
            if (ids.isEmpty()) {
                c.commit();
                return Collections.emptyList();
            }
            String in = placeholders(ids.size());
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + taskTableByKey() + " SET " + claimSetList()
                    + " WHERE " + LIVE + " AND status = " + Dialect.status(TaskStatus.PENDING) + " AND id IN (" + in
                    + ")")) {
                ps.setString(1, owner);
                ps.setLong(2, leaseMillis);
                for (int i = 0; i < ids.size(); i++) {
                    ps.setLong(3 + i, ids.get(i));
                }
                int updated = ps.executeUpdate();
                if (updated != ids.size()) {
                    throw new IllegalStateException("claim locked " + ids.size() + " rows but updated " + updated);
                }
            }
            List<T> rows = new ArrayList<>(ids.size());
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT " + TASK_COLUMNS + " FROM dbtasks_task WHERE " + LIVE + " AND id IN (" + in + ")")) {
                for (int i = 0; i < ids.size(); i++) {
                    ps.setLong(1 + i, ids.get(i));
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows.add(reader.read(rs));
                    }
                }
            }
            c.commit();
            return rows;
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(true);
            c.setTransactionIsolation(isolation);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>On MariaDB {@code FORCE INDEX (PRIMARY)}: with few RUNNING rows its optimizer reaches
     * {@code id IN (...) AND status = 'RUNNING'} through {@code dbtasks_task_rescue_idx} (shown by
     * {@code EXPLAIN}), locking other tasks' entries of that index.
     */
    @Override
    public String taskTableByKey() {
        return "dbtasks_task FORCE INDEX (PRIMARY)";
    }

    @Override
    public boolean insertReturning() {
        return true; // MariaDB 10.5+
    }

    /** The tables partitioned by history day, each with the same partitions. */
    private static final List<String> HISTORY_TABLES = List.of("dbtasks_task", "dbtasks_attempt");

    /** The live partition (history day 0) of both tables; see V30. */
    private static final String LIVE_PARTITION = "p_live";

    /** The partition of the rows that finished before history was partitioned (day -1); see V30. */
    private static final String LEGACY_PARTITION = "p_legacy";

    /** How long partition DDL waits for statements that hold the table, in seconds. */
    private static final int DDL_LOCK_WAIT_SECONDS = 10;

    private static final DateTimeFormatter DAY_NAME = DateTimeFormatter.BASIC_ISO_DATE;

    @Override
    public boolean partitionsHistory() {
        return true;
    }

    /**
     * {@inheritDoc}
     *
     * <p>On MariaDB a RANGE partition holds every day from the previous partition's bound to its own,
     * and partitions are added after the last one only: the days from the last bound to {@code toDay}
     * are added with one {@code ALTER TABLE ... ADD PARTITION} per table. An earlier day that a
     * partition of several days holds (such as the first day partition, which holds every day before
     * its own) gets a partition of its own by {@code REORGANIZE PARTITION}, which copies that
     * partition's rows; a day a partition is named for (its last) is left in it, so the days the
     * engine makes ahead (from yesterday) never copy rows. Needs the ALTER privilege on both tables.
     * An engine that changes the same partitions at the same time fails (duplicate partition name,
     * bound not above the last, partition gone); this one then leaves the days to it.
     */
    @Override
    public int createHistoryDays(Connection c, int fromDay, int toDay) throws SQLException {
        int created = 0;
        for (String table : HISTORY_TABLES) {
            List<Partition> partitions = partitions(c, table);
            int last = partitions.isEmpty()
                    ? 1
                    : partitions.get(partitions.size() - 1).bound();
            int made = 0;
            for (int day = Math.max(fromDay, 1); day <= Math.min(toDay, last - 1); day++) {
                if (splitOff(c, table, partitions, day)) {
                    made++;
                    partitions = partitions(c, table);
                }
            }
            List<String> days = new ArrayList<>();
            for (int day = Math.max(fromDay, last); day <= toDay; day++) {
                days.add("PARTITION " + dayPartition(day) + " VALUES LESS THAN (" + (day + 1) + ")");
            }
            if (!days.isEmpty()
                    && ddlUnlessMadeMeanwhile(
                            c, "ALTER TABLE " + table + " ADD PARTITION (" + String.join(", ", days) + ")")) {
                made += days.size();
            }
            if (table.equals("dbtasks_task")) {
                created = made;
            }
        }
        return created;
    }

    /**
     * Gives {@code day} a partition of its own if a partition of several days that is not named for
     * it holds it: that partition is reorganized into the days before, the day, and the days after.
     *
     * @return whether the partition was split
     */
    private static boolean splitOff(Connection c, String table, List<Partition> partitions, int day)
            throws SQLException {
        int from = -1;
        for (Partition p : partitions) {
            if (day >= from && day < p.bound()) {
                if (from < 1 || p.bound() == day + 1) {
                    return false; // p_legacy, p_live, or the day the partition is named for
                }
                List<String> parts = new ArrayList<>();
                if (from < day) {
                    parts.add("PARTITION " + dayPartition(day - 1) + " VALUES LESS THAN (" + day + ")");
                }
                parts.add("PARTITION " + dayPartition(day) + " VALUES LESS THAN (" + (day + 1) + ")");
                parts.add("PARTITION " + p.name() + " VALUES LESS THAN (" + p.bound() + ")");
                return ddlUnlessMadeMeanwhile(
                        c,
                        "ALTER TABLE " + table + " REORGANIZE PARTITION " + p.name() + " INTO ("
                                + String.join(", ", parts) + ")");
            }
            from = p.bound();
        }
        return false;
    }

    /**
     * @return whether {@code sql} ran; {@code false} if another engine changed the partitions first
     *     (1517: duplicate partition name; 1493: a bound not above the last; 1507: no such partition;
     *     1520: the ranges do not match any more)
     */
    private static boolean ddlUnlessMadeMeanwhile(Connection c, String sql) throws SQLException {
        try {
            ddl(c, sql);
            return true;
        } catch (SQLException e) {
            int code = e.getErrorCode();
            if (code == 1517 || code == 1493 || code == 1507 || code == 1520) {
                return false;
            }
            throw e;
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>From {@code information_schema.PARTITIONS}: each partition holds the days from the previous
     * partition's bound up to its own, so the first day partition also holds any earlier day after
     * the live one.
     */
    @Override
    public List<HistoryPartition> historyPartitions(Connection c) throws SQLException {
        List<HistoryPartition> history = new ArrayList<>();
        int from = -1;
        for (Partition p : partitions(c, "dbtasks_task")) {
            if (!p.name().equals(LIVE_PARTITION)) {
                history.add(new HistoryPartition(p.name(), from, p.bound()));
            }
            from = p.bound();
        }
        return history;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Deletes the keys of the partition's tasks, then drops the partition of both tables with
     * {@code ALTER TABLE ... DROP PARTITION}, which commits the caller's transaction first: the keys
     * and the caller's earlier changes are committed even if a drop then fails. Needs the ALTER and
     * DROP privileges on both tables.
     */
    @Override
    public long dropHistoryPartition(Connection c, HistoryPartition partition) throws SQLException {
        String name = partition.name();
        if (!name.equals(LEGACY_PARTITION) && !name.matches("p\\d{8}")) {
            throw new IllegalArgumentException("not a partition of history: " + name);
        }
        long keys;
        try (PreparedStatement ps = c.prepareStatement("DELETE k FROM dbtasks_task_key k JOIN dbtasks_task PARTITION ("
                + name + ") t ON t.idempotency_key = k.idempotency_key")) {
            keys = ps.executeUpdate();
        }
        for (String table : HISTORY_TABLES) {
            if (partitions(c, table).stream().anyMatch(p -> p.name().equals(name))) {
                ddl(c, "ALTER TABLE " + table + " DROP PARTITION " + name);
            }
        }
        return keys;
    }

    /** A partition of a table partitioned by history day: its name and bound (exclusive). */
    private record Partition(String name, int bound) {}

    /** @return {@code table}'s partitions in range order; empty if it is not partitioned */
    private static List<Partition> partitions(Connection c, String table) throws SQLException {
        List<Partition> partitions = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT PARTITION_NAME, PARTITION_DESCRIPTION"
                + " FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"
                + " AND PARTITION_NAME IS NOT NULL ORDER BY PARTITION_ORDINAL_POSITION")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    partitions.add(new Partition(rs.getString(1), Integer.parseInt(rs.getString(2))));
                }
            }
        }
        return partitions;
    }

    /** @return the name of the partition of {@code day}, days since 1970-01-01: pYYYYMMDD */
    private static String dayPartition(int day) {
        return "p" + LocalDate.ofEpochDay(day).format(DAY_NAME);
    }

    /**
     * Runs partition DDL, waiting at most {@value #DDL_LOCK_WAIT_SECONDS} seconds for the table's
     * metadata lock: while DDL waits for a long transaction that read or wrote the table, every new
     * statement on the table waits behind it, so a bounded wait fails the DDL (retried at the next
     * run) rather than stalling claims and settles.
     */
    private static void ddl(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            long before;
            try (ResultSet rs = s.executeQuery("SELECT @@SESSION.lock_wait_timeout")) {
                rs.next();
                before = rs.getLong(1);
            }
            s.execute("SET SESSION lock_wait_timeout = " + DDL_LOCK_WAIT_SECONDS);
            try {
                s.execute(sql);
            } finally {
                s.execute("SET SESSION lock_wait_timeout = " + before);
            }
        }
    }

    @Override
    public boolean isUniqueViolation(SQLException e) {
        return e.getErrorCode() == 1062
                || "23000".equals(e.getSQLState()) && e.getMessage().contains("Duplicate");
    }

    @Override
    public void readCommittedTransaction(Connection c) throws SQLException {
        // Without SESSION: the next transaction only, so the session's level (and the driver's
        // cached copy of it) stays as it was.
        try (java.sql.Statement s = c.createStatement()) {
            s.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
        }
    }

    @Override
    public String latestCommittedRead() {
        return " LOCK IN SHARE MODE";
    }

    static String placeholders(int n) {
        return String.join(", ", Collections.nCopies(n, "?"));
    }

    /** Digit segments read both ways at most this many in one path; past it a search is refused. */
    static final int MAX_DIGIT_SEGMENTS = 4;

    /**
     * {@code JSON_UNQUOTE(JSON_EXTRACT(payload, path)) = value}, the path quoted per field. A segment
     * of digits names an object's field or an array's element (as PostgreSQL's {@code #>>} reads it),
     * so each of its readings is tried; only one can match, since a value is an object or an array.
     */
    @Override
    public Optional<PayloadSql> payloadSql(Connection c, List<String> path, String value) {
        long digitSegments = path.stream().filter(seg -> seg.matches("[0-9]+")).count();
        if (digitSegments > MAX_DIGIT_SEGMENTS) {
            throw new IllegalArgumentException("a payload path may have at most " + MAX_DIGIT_SEGMENTS
                    + " segments made of digits on MariaDB (each is read as a field and as an element), got "
                    + digitSegments + " in " + path + ": narrow the search by a shorter path or another filter");
        }
        List<String> condition = new ArrayList<>();
        List<Object> args = new ArrayList<>();
        for (int reading = 0; reading < 1 << digitSegments; reading++) {
            StringBuilder p = new StringBuilder("$");
            int digit = 0;
            for (String seg : path) {
                boolean asIndex = seg.matches("[0-9]+") && (reading & (1 << digit++)) != 0;
                p.append(asIndex ? "[" + seg + "]" : ".\"" + seg + "\"");
            }
            // As on PostgreSQL and H2: code points compared without padding, and a JSON null is no
            // value. JSON_UNQUOTE returns utf8mb3 text on some servers (MariaDB 11.4), which
            // utf8mb4_nopad_bin cannot collate: it is converted to utf8mb4 first, which loses nothing.
            condition.add("(CONVERT(JSON_UNQUOTE(JSON_EXTRACT(payload, ?)) USING utf8mb4) COLLATE utf8mb4_nopad_bin = ?"
                    + " AND JSON_TYPE(JSON_EXTRACT(payload, ?)) <> 'NULL')");
            args.add(p.toString());
            args.add(value);
            args.add(p.toString());
        }
        return Optional.of(new PayloadSql(
                "dbtasks_task",
                List.of(),
                condition.size() == 1 ? condition.get(0) : "(" + String.join(" OR ", condition) + ")",
                List.copyOf(args)));
    }

    /** The reference column keeps the server's collation, which ignores case and trailing spaces. */
    @Override
    public Optional<String> exactTextRecheck(String column) {
        return Optional.of(column + " COLLATE utf8mb4_nopad_bin = ?");
    }

    @Override
    public String epochMinute(String column) {
        return "TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', " + column + ")";
    }

    @Override
    public boolean searchesPayloadsInSql() {
        return true;
    }

    @Override
    public String pendingKeys() {
        // pending_key (the key of a PENDING task, else NULL) follows the queue in the per-key claim
        // index, so the window reads that index's entries in key order.
        return "SELECT k, COUNT(*) FROM (SELECT pending_key AS k FROM dbtasks_task FORCE INDEX"
                + " (dbtasks_task_key_claim_idx) WHERE queue = ? AND " + LIVE
                + " AND pending_key > ? ORDER BY pending_key LIMIT ?) w"
                + " GROUP BY k ORDER BY k";
    }

    @Override
    public String pendingOfKey() {
        return "pending_key = ?";
    }

    @Override
    public String taskTableForKey() {
        return "dbtasks_task FORCE INDEX (dbtasks_task_key_claim_idx)";
    }
}
