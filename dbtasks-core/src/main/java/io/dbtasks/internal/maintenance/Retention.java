package io.dbtasks.internal.maintenance;

import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Deletes old rows in batches, each its own short transaction, so retention never holds many locks
 * or a long transaction.
 *
 * <p>Each batch locks its rows with {@code FOR UPDATE SKIP LOCKED} and deletes them by key, so a
 * row held by another transaction (a frozen worker between its locking read and its commit) is
 * left for a later run instead of making the sweep, and every batch behind it, wait.
 */
public final class Retention {
    /** Rows per batch. */
    public static final int BATCH = 1000;

    private Retention() {}

    /**
     * Deletes rows of {@code table} matching {@code where}, whose one parameter is bound to {@code
     * -age} in milliseconds (for a {@code column < } {@link Dialect#nowPlusMillis()} comparison).
     * Rows another transaction has locked are skipped.
     *
     * @param key the columns of the table's primary key
     * @return how many rows were deleted
     * @throws IllegalArgumentException if {@code age} is not positive
     */
    public static int deleteInBatches(
            Jdbc jdbc, Dialect dialect, String table, List<String> key, String where, Duration age) {
        if (age.isNegative() || age.isZero()) {
            throw new IllegalArgumentException("age must be positive, got " + age);
        }
        String select = "SELECT " + String.join(", ", key) + " FROM " + table + " WHERE " + where + " LIMIT ?"
                + dialect.forUpdateSkipLocked();
        String delete = "DELETE FROM " + table + " WHERE "
                + key.stream().map(k -> k + " = ?").collect(Collectors.joining(" AND ")) + " AND " + where;
        int total = 0;
        int locked;
        do {
            int[] batch = Jdbc.retryingDeadlocks(() -> jdbc.inTransaction("Retention of " + table, c -> {
                dialect.readCommittedTransaction(c);
                List<Object[]> rows = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement(select)) {
                    ps.setLong(1, -age.toMillis());
                    ps.setInt(2, BATCH);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            Object[] row = new Object[key.size()];
                            for (int i = 0; i < row.length; i++) {
                                row[i] = rs.getObject(i + 1);
                            }
                            rows.add(row);
                        }
                    }
                }
                int deleted = 0;
                if (!rows.isEmpty()) {
                    try (PreparedStatement ps = c.prepareStatement(delete)) {
                        for (Object[] row : rows) {
                            for (int i = 0; i < row.length; i++) {
                                ps.setObject(i + 1, row[i]);
                            }
                            ps.setLong(row.length + 1, -age.toMillis());
                            ps.addBatch();
                        }
                        for (int n : ps.executeBatch()) {
                            // a row we hold, deleted by key: 1, or 0 had it stopped matching; never more
                            Jdbc.changedOne(n == PreparedStatement.SUCCESS_NO_INFO ? 1 : n, "retention of " + table);
                            deleted += n == PreparedStatement.SUCCESS_NO_INFO ? 1 : n;
                        }
                    }
                }
                return new int[] {rows.size(), deleted};
            }));
            locked = batch[0];
            total += batch[1];
        } while (locked == BATCH);
        return total;
    }
}
