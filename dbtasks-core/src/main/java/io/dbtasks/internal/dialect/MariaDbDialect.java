package io.dbtasks.internal.dialect;

import io.dbtasks.TaskStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
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
