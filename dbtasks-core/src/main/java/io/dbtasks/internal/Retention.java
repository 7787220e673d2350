package io.dbtasks.internal;

import io.dbtasks.internal.dialect.Dialect;
import java.sql.PreparedStatement;
import java.time.Duration;

/**
 * Deletes old rows in batches, each its own short transaction, so retention never holds many locks
 * or a long transaction.
 */
final class Retention {
    /** Rows per DELETE statement. */
    static final int BATCH = 1000;

    private Retention() {}

    /**
     * Deletes rows of {@code table} matching {@code where}, whose one parameter is bound to {@code
     * -age} in milliseconds (for a {@code column < } {@link Dialect#nowPlusMillis()} comparison).
     *
     * @return how many rows were deleted
     */
    static int deleteInBatches(Jdbc jdbc, Dialect dialect, String table, String where, Duration age) {
        if (age.isNegative() || age.isZero()) {
            throw new IllegalArgumentException("age must be positive, got " + age);
        }
        String sql = dialect.deleteBatch(table, where);
        int total = 0;
        int deleted;
        do {
            deleted = jdbc.withConnection("Retention of " + table, c -> {
                try (PreparedStatement ps = c.prepareStatement(sql)) {
                    ps.setLong(1, -age.toMillis());
                    ps.setInt(2, BATCH);
                    return ps.executeUpdate();
                }
            });
            total += deleted;
        } while (deleted == BATCH);
        return total;
    }
}
