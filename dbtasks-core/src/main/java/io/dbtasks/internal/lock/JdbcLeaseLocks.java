package io.dbtasks.internal.lock;

import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.DbClock;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.lock.Lease;
import io.dbtasks.lock.spi.AbstractLeaseLocks;
import io.dbtasks.lock.spi.Renewal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Lease locks in {@code dbtasks_lock}, one row per name.
 *
 * <p>Acquire reads the row. No row: draw a token and INSERT (a unique violation, or PostgreSQL's
 * {@code ON CONFLICT DO NOTHING} inserting nothing, means another caller inserted first: read
 * again). A row whose lease has ended by the database clock: draw a token and take it over with
 * {@code UPDATE ... WHERE name = ? AND token = <old> AND expires_at <= now}, a compare-and-set on
 * the old holder's token; 0 rows means another caller took it first. A row whose lease still runs:
 * not granted. Renew and release are UPDATEs guarded by {@code name AND token AND expires_at > now},
 * so a holder whose lease ended, or who was taken over, changes nothing. Release sets the expiry to
 * now instead of deleting the row, and rows are never deleted, so the row always holds the name's
 * last token and tokens strictly increase per name (see {@link DbClock}).
 *
 * <p>Waiters line up in {@code dbtasks_lock_waiter}: a ticket from the same sequence, kept alive by
 * each check of its place, which is the number of live smaller tickets of the name.
 *
 * <p>Each operation runs again, whole, when the database rolls one of its statements back as a
 * deadlock victim or a Galera certification failure (SQLState class 40): every statement is a
 * guarded write or a read, so running them again changes nothing that the first run committed
 * (at most a token or ticket is drawn and left unused).
 */
public final class JdbcLeaseLocks extends AbstractLeaseLocks {
    private static final int MAX_TRIES = 5;

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final DbClock clock;
    private final String insertSql;
    private final String takeOverSql;
    private final String renewSql;
    private final String releaseSql;
    private final String selectSql;
    private final String joinSql;
    private final String pruneSql;
    private final String refreshSql;
    private final String aheadSql;

    /**
     * @param jdbc the engine's connections
     * @param dialect the database's dialect
     * @param workerId this process's name in every grant's owner
     * @param renewal the heartbeat of {@code withLock}
     */
    public JdbcLeaseLocks(Jdbc jdbc, Dialect dialect, String workerId, Renewal renewal) {
        super(workerId, renewal);
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.clock = new DbClock(dialect);
        String now = dialect.now();
        this.insertSql = "INSERT INTO dbtasks_lock (name, token, owner, acquired_at, expires_at) VALUES (?, ?, ?, "
                + now + ", ?)" + dialect.onConflictDoNothing();
        this.takeOverSql = "UPDATE dbtasks_lock SET token = ?, owner = ?, acquired_at = " + now + ", expires_at = ?"
                + " WHERE name = ? AND token = ? AND expires_at <= " + now;
        this.renewSql = "UPDATE dbtasks_lock SET expires_at = ? WHERE name = ? AND token = ? AND expires_at > " + now;
        this.releaseSql =
                "UPDATE dbtasks_lock SET expires_at = " + now + " WHERE name = ? AND token = ? AND expires_at > " + now;
        this.selectSql = "SELECT token, owner, expires_at, CASE WHEN expires_at > " + now
                + " THEN 1 ELSE 0 END AS live FROM dbtasks_lock WHERE name = ?";
        this.joinSql = "INSERT INTO dbtasks_lock_waiter (name, ticket, owner, expires_at) VALUES (?, ?, ?, ?)";
        this.pruneSql = "DELETE FROM dbtasks_lock_waiter WHERE name = ? AND expires_at <= " + now;
        this.refreshSql = "UPDATE dbtasks_lock_waiter SET expires_at = " + dialect.nowPlusMillis()
                + " WHERE name = ? AND ticket = ? AND expires_at > " + now;
        this.aheadSql =
                "SELECT COUNT(*) FROM dbtasks_lock_waiter WHERE name = ? AND ticket < ? AND expires_at > " + now;
    }

    @Override
    public Optional<Lease> tryAcquire(String name, Duration lease) {
        validate(name, lease);
        String owner = currentOwner();
        return Jdbc.retryingDeadlocks(() -> jdbc.withConnection("Acquire lock '" + name + "'", c -> {
            for (int i = 0; i < MAX_TRIES; i++) {
                Row row = select(c, name);
                if (row != null && row.live()) {
                    return Optional.empty();
                }
                DbClock.Grant grant = clock.draw(c, lease.toMillis());
                Lease granted = new Lease(name, grant.token(), owner, grant.expiresAt());
                if (row == null
                        ? insert(c, granted)
                        : takeOver(c, granted, row.lease().token())) {
                    return Optional.of(granted);
                }
                // Another caller inserted or took over between our read and our write: look again.
            }
            return Optional.empty();
        }));
    }

    @Override
    public Optional<Lease> renew(Lease lease, Duration duration) {
        Objects.requireNonNull(lease, "lease");
        requirePositive(Objects.requireNonNull(duration, "duration"), "duration");
        return Jdbc.retryingDeadlocks(() -> jdbc.withConnection("Renew lock '" + lease.name() + "'", c -> {
            Lease renewed =
                    new Lease(lease.name(), lease.token(), lease.owner(), clock.nowPlus(c, duration.toMillis()));
            try (PreparedStatement ps = c.prepareStatement(renewSql)) {
                dialect.setInstant(ps, 1, renewed.expiresAt());
                ps.setString(2, lease.name());
                ps.setLong(3, lease.token());
                return Jdbc.changedOne(ps.executeUpdate(), "renewal of lock '" + lease.name() + "'")
                        ? Optional.of(renewed)
                        : Optional.<Lease>empty();
            }
        }));
    }

    @Override
    public boolean release(Lease lease) {
        Objects.requireNonNull(lease, "lease");
        boolean released =
                Jdbc.retryingDeadlocks(() -> jdbc.withConnection("Release lock '" + lease.name() + "'", c -> {
                    try (PreparedStatement ps = c.prepareStatement(releaseSql)) {
                        ps.setString(1, lease.name());
                        ps.setLong(2, lease.token());
                        return Jdbc.changedOne(ps.executeUpdate(), "release of lock '" + lease.name() + "'");
                    }
                }));
        if (released) {
            released();
        }
        return released;
    }

    @Override
    public Optional<Lease> find(String name) {
        io.dbtasks.StoredText.requireText("lock name", Objects.requireNonNull(name, "name"));
        return jdbc.withConnection("Find lock '" + name + "'", c -> {
            Row row = select(c, name);
            return row != null && row.live() ? Optional.of(row.lease()) : Optional.<Lease>empty();
        });
    }

    @Override
    protected long joinLine(String name, String owner, Duration ttl) {
        return Jdbc.retryingDeadlocks(() -> jdbc.withConnection("Join the line of lock '" + name + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(pruneSql)) {
                ps.setString(1, name); // tickets of waiters that died
                ps.executeUpdate();
            }
            DbClock.Grant ticket = clock.draw(c, ttl.toMillis());
            try (PreparedStatement ps = c.prepareStatement(joinSql)) {
                ps.setString(1, name);
                ps.setLong(2, ticket.token());
                ps.setString(3, owner);
                dialect.setInstant(ps, 4, ticket.expiresAt());
                ps.executeUpdate();
            }
            return ticket.token();
        }));
    }

    @Override
    protected long placeInLine(String name, long ticket, Duration ttl) {
        return Jdbc.retryingDeadlocks(() -> jdbc.withConnection("Check the line of lock '" + name + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(refreshSql)) {
                ps.setLong(1, ttl.toMillis());
                ps.setString(2, name);
                ps.setLong(3, ticket);
                if (!Jdbc.changedOne(ps.executeUpdate(), "ticket " + ticket + " of lock '" + name + "'")) {
                    return GONE;
                }
            }
            try (PreparedStatement ps = c.prepareStatement(aheadSql)) {
                ps.setString(1, name);
                ps.setLong(2, ticket);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            }
        }));
    }

    @Override
    protected void leaveLine(String name, long ticket) {
        Jdbc.retryingDeadlocks(() -> jdbc.withConnection("Leave the line of lock '" + name + "'", c -> {
            try (PreparedStatement ps =
                    c.prepareStatement("DELETE FROM dbtasks_lock_waiter WHERE name = ? AND ticket = ?")) {
                ps.setString(1, name);
                ps.setLong(2, ticket);
                return ps.executeUpdate();
            }
        }));
    }

    private record Row(Lease lease, boolean live) {}

    private Row select(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(selectSql)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new Row(
                        new Lease(
                                name, rs.getLong("token"), rs.getString("owner"), dialect.getInstant(rs, "expires_at")),
                        rs.getInt("live") == 1);
            }
        }
    }

    private boolean insert(Connection c, Lease l) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(insertSql)) {
            ps.setString(1, l.name());
            ps.setLong(2, l.token());
            ps.setString(3, l.owner());
            dialect.setInstant(ps, 4, l.expiresAt());
            return dialect.insertIfAbsent(ps);
        }
    }

    private boolean takeOver(Connection c, Lease l, long oldToken) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(takeOverSql)) {
            ps.setLong(1, l.token());
            ps.setString(2, l.owner());
            dialect.setInstant(ps, 3, l.expiresAt());
            ps.setString(4, l.name());
            ps.setLong(5, oldToken);
            return Jdbc.changedOne(ps.executeUpdate(), "takeover of lock '" + l.name() + "'");
        }
    }
}
