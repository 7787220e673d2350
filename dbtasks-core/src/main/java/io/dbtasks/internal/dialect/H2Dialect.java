package io.dbtasks.internal.dialect;

import io.dbtasks.TaskStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * H2 2.x, embedded. The sweeps (rescue, retention) lock with {@code FOR UPDATE SKIP LOCKED}, which
 * H2 2.4 supports; a claim is a guarded conditional UPDATE: it reads due
 * ids, then updates only those still PENDING (the PENDING status is re-checked under
 * the row lock) and reads the changed rows back through {@code FINAL TABLE}. Two claimers racing for
 * a row: one updates it, the other's guard fails and it simply gets fewer rows.
 */
public final class H2Dialect implements Dialect {
    @Override
    public String name() {
        return "h2";
    }

    @Override
    public String historyDay(String timestamp) {
        return "CAST(FLOOR(EXTRACT(EPOCH FROM " + timestamp + ") / 86400) AS INTEGER)";
    }

    @Override
    public String now() {
        return "CURRENT_TIMESTAMP(6)";
    }

    @Override
    public String nowPlusMillis() {
        return "DATEADD(MILLISECOND, ?, CURRENT_TIMESTAMP(6))";
    }

    @Override
    public String nextToken() {
        return "NEXT VALUE FOR dbtasks_token_seq";
    }

    @Override
    public void setInstant(PreparedStatement ps, int index, Instant value) throws SQLException {
        if (value == null) {
            ps.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            ps.setObject(index, value.atOffset(ZoneOffset.UTC));
        }
    }

    @Override
    public Instant getInstant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    @Override
    public Optional<String> updateReadingBack(String update) {
        return Optional.of("SELECT " + TASK_COLUMNS + " FROM FINAL TABLE (" + update + ")");
    }

    @Override
    public String claimOrder() {
        // H2 reads in index order only when the ORDER BY is a prefix of the index; see claim().
        return "queue, status, " + CLAIM_ORDER;
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
        // The due ids first, then the guarded update by primary key (still PENDING and due, should an
        // operator have rescheduled one meanwhile): with the ids as a subquery, H2
        // tested every PENDING row against it, so each claim cost the whole backlog.
        // The ORDER BY names the claim index's leading columns too, though the WHERE fixes them: H2 2.4
        // reads rows in index order only when the ORDER BY is a prefix of the index, and otherwise
        // sorted the whole due backlog for every claim (EXPLAIN ANALYZE over 50,000 PENDING rows:
        // scanCount 50,001 without them, 24 with them and "index sorted").
        List<Long> ids = DueIds.read(
                c,
                this,
                "SELECT id FROM dbtasks_task WHERE " + dueCondition(claimable) + " ORDER BY queue, status, "
                        + CLAIM_ORDER + " LIMIT ?",
                queue,
                claimable,
                limit);
        if (ids.isEmpty()) {
            return new ArrayList<>();
        }
        String sql = "SELECT " + TASK_COLUMNS + " FROM FINAL TABLE (UPDATE dbtasks_task SET " + claimSetList()
                + " WHERE status = " + Dialect.status(TaskStatus.PENDING) + " AND run_at <= " + now() + " AND id IN ("
                + String.join(", ", Collections.nCopies(ids.size(), "?"))
                + "))";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, owner);
            ps.setLong(2, leaseMillis);
            for (int i = 0; i < ids.size(); i++) {
                ps.setLong(3 + i, ids.get(i));
            }
            List<T> rows = new ArrayList<>(ids.size());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(reader.read(rs));
                }
            }
            return rows;
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Not on H2, embedded: there is no round trip or log flush to share, so combining
     * would only add a hand-off between threads.
     */
    @Override
    public boolean combinesEnqueues() {
        return false;
    }

    @Override
    public Optional<String> insertReadingBack(String insert) {
        return Optional.of("SELECT " + GENERATED_COLUMNS + " FROM FINAL TABLE (" + insert + ")");
    }

    @Override
    public boolean isUniqueViolation(SQLException e) {
        return "23505".equals(e.getSQLState());
    }

    @Override
    public String pendingKeys() {
        return "SELECT k, COUNT(*) FROM (SELECT concurrency_key AS k FROM dbtasks_task WHERE queue = ? AND status = "
                + Dialect.status(io.dbtasks.TaskStatus.PENDING) + " AND concurrency_key > ?"
                + " ORDER BY queue, status, concurrency_key LIMIT ?) w GROUP BY k ORDER BY k";
    }

    @Override
    public String keyClaimOrder() {
        // H2 reads in index order only when the ORDER BY is a prefix of the index.
        return "queue, status, concurrency_key, " + CLAIM_ORDER;
    }
}
