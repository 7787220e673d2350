package io.dbtasks.internal.support;

import io.dbtasks.internal.dialect.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/**
 * The database clock and the fencing-token sequence, read for lock and run-once grants.
 *
 * <p>A grant's token is drawn after its caller read the row it replaces, so the new token is greater
 * than the old one: the old one was drawn before it was written, and written before it was read.
 * Its expiry is the database's now plus the lease, computed in the same statement, so no expiry
 * ever comes from this machine's clock.
 */
public final class DbClock {
    /** A token and the expiry of a lease starting now. */
    public record Grant(long token, Instant expiresAt) {}

    private final Dialect dialect;
    private final String drawSql;
    private final String nowPlusSql;

    public DbClock(Dialect dialect) {
        this.dialect = dialect;
        this.drawSql = "SELECT " + dialect.nextToken() + " AS token, " + dialect.nowPlusMillis() + " AS expires_at";
        this.nowPlusSql = "SELECT " + dialect.nowPlusMillis() + " AS expires_at";
    }

    /** Draws the next fencing token and the expiry of a lease of {@code leaseMillis} from now. */
    public Grant draw(Connection c, long leaseMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(drawSql)) {
            ps.setLong(1, leaseMillis);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Grant(rs.getLong("token"), dialect.getInstant(rs, "expires_at"));
            }
        }
    }

    /** @return the database's now plus {@code millis} */
    public Instant nowPlus(Connection c, long millis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(nowPlusSql)) {
            ps.setLong(1, millis);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return dialect.getInstant(rs, "expires_at");
            }
        }
    }
}
