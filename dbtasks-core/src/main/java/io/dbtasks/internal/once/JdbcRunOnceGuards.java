package io.dbtasks.internal.once;

import io.dbtasks.DbTasksException;
import io.dbtasks.internal.completion.Attempts;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.maintenance.Retention;
import io.dbtasks.internal.support.DbClock;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeasedWork;
import io.dbtasks.lock.spi.AbstractLeaseLocks;
import io.dbtasks.lock.spi.Owners;
import io.dbtasks.lock.spi.Renewal;
import io.dbtasks.once.RunOnceGuards;
import io.dbtasks.once.RunOnceResult;
import io.dbtasks.once.RunOnceResult.Outcome;
import io.dbtasks.once.RunOnceTarget;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Run-once guards in {@code dbtasks_once}; the protocol is described on {@link RunOnceGuards}.
 *
 * <p>The claim reads the key's row first, and draws a token only when it is about to write, so the
 * new token is greater than the one it replaces ({@link DbClock}). Every write is one statement
 * guarded by the state it expects: the INSERT by the primary key, a takeover by {@code token = <old>
 * AND status = RUNNING AND lease_expires_at <= now}, a re-run of a failure by {@code token = <old>
 * AND status = FAILED}, renewal and completion by {@code token = <ours> AND status = RUNNING}.
 * A write that changes 0 rows lost a race and the claim reads the row again.
 *
 * <p>A claim may name a target ({@link io.dbtasks.once.RunOnceTarget}), stored in the row; the guard
 * rescue ({@link GuardRescue}) takes a RUNNING row past its lease over with the same takeover
 * statement and runs the target's work, so only one engine re-runs a dead runner's key. A success
 * keeps the error of the latest failed run in {@code last_error} as its trace.
 *
 * <p>The claim, the rescue, each renewal and the completion run again, whole, when the database
 * rolls one of their statements back as a deadlock victim or a Galera certification failure
 * (SQLState class 40): each is a read or a write guarded by the key and token, so running it again
 * changes nothing the first run committed.
 */
public final class JdbcRunOnceGuards implements RunOnceGuards {
    /** The states of a {@code dbtasks_once} row (its own table, not the task state machine). */
    enum GuardStatus {
        RUNNING,
        SUCCEEDED,
        FAILED
    }

    private static final Logger log = LoggerFactory.getLogger(JdbcRunOnceGuards.class);
    private static final int MAX_KEY = 255;
    private static final int MAX_TRIES = 5;

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final DbClock clock;
    private final Renewal renewal;
    private final String workerId;
    private final String selectSql;
    private final String insertSql;
    private final String rerunSql;
    private final String renewSql;
    private final String finishSql;

    /**
     * @param jdbc the engine's connections
     * @param dialect the database's dialect
     * @param workerId this process's name in every guard's owner
     * @param renewal the heartbeat of running work
     */
    public JdbcRunOnceGuards(Jdbc jdbc, Dialect dialect, String workerId, Renewal renewal) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.clock = new DbClock(dialect);
        this.renewal = renewal;
        this.workerId = workerId;
        String now = dialect.now();
        this.selectSql = "SELECT status, token, owner, lease_expires_at, CASE WHEN lease_expires_at > " + now
                + " THEN 1 ELSE 0 END AS live FROM dbtasks_once WHERE once_key = ?";
        this.insertSql =
                "INSERT INTO dbtasks_once (once_key, status, token, owner, lease_expires_at, target, started_at,"
                        + " runs, created_at, updated_at) VALUES (?, '" + GuardStatus.RUNNING + "', ?, ?, ?, ?, " + now
                        + ", 1, "
                        + now
                        + ", " + now + ")"
                        + dialect.onConflictDoNothing();
        // Binds: new token, owner, expiry, target, key, old token, old status. Expiry is re-checked for
        // RUNNING.
        this.rerunSql = "UPDATE dbtasks_once SET status = '" + GuardStatus.RUNNING
                + "', token = ?, owner = ?, lease_expires_at = ?, target = ?,"
                + " started_at = " + now + ", finished_at = NULL, duration_ms = NULL, runs = runs + 1, updated_at = "
                + now
                + " WHERE once_key = ? AND token = ? AND status = ? AND (status = '" + GuardStatus.FAILED
                + "' OR lease_expires_at <= "
                + now + ")";
        this.renewSql = "UPDATE dbtasks_once SET lease_expires_at = " + dialect.nowPlusMillis() + ", updated_at = "
                + now + " WHERE once_key = ? AND token = ? AND status = '" + GuardStatus.RUNNING + "'";
        // A success keeps the error of the latest failed run as its trace; a failure replaces it.
        this.finishSql = "UPDATE dbtasks_once SET status = ?, last_error = COALESCE(?, last_error), duration_ms = ?,"
                + " finished_at = " + now
                + ", lease_expires_at = NULL, updated_at = " + now
                + " WHERE once_key = ? AND token = ? AND status = '" + GuardStatus.RUNNING + "'";
    }

    @Override
    public RunOnceResult runOnce(String key, Duration lease, LeasedWork work) {
        return runOnce(key, null, lease, work);
    }

    @Override
    public RunOnceResult runOnce(String key, String target, Duration lease, LeasedWork work) {
        io.dbtasks.StoredText.requireText("run-once key", Objects.requireNonNull(key, "key"));
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(work, "work");
        if (key.isEmpty() || key.length() > MAX_KEY) {
            throw new IllegalArgumentException("run-once key must be 1 to " + MAX_KEY + " characters: '" + key + "'");
        }
        if (target != null && (target.isBlank() || target.length() > RunOnceTarget.MAX_NAME)) {
            throw new IllegalArgumentException("run-once target must be 1 to " + RunOnceTarget.MAX_NAME
                    + " characters and not blank: '" + target + "'");
        }
        AbstractLeaseLocks.requirePositive(lease, "lease");
        String owner = Owners.current(workerId);
        RunOnceResult claim = Jdbc.retryingDeadlocks(() ->
                jdbc.withConnection("Claim run-once key '" + key + "'", c -> claim(c, key, target, owner, lease)));
        if (claim.outcome() != Outcome.RAN && claim.outcome() != Outcome.TOOK_OVER) {
            log.debug(
                    "Run-once key '{}' skipped: {} {}",
                    io.dbtasks.StoredText.forLog(key),
                    claim.outcome(),
                    claim.holder().orElse(""));
            return claim;
        }
        return run(claim, lease, work);
    }

    @Override
    public int deleteOlderThan(Duration age) {
        Objects.requireNonNull(age, "age");
        return Retention.deleteInBatches(
                jdbc,
                dialect,
                "dbtasks_once",
                List.of("once_key"),
                "updated_at < " + dialect.nowPlusMillis() + " AND (status <> '" + GuardStatus.RUNNING
                        + "' OR lease_expires_at <= " + dialect.now() + ")",
                age);
    }

    /**
     * Runs a key again for the guard rescue: only if its row is still RUNNING past its lease, taken
     * over by the same compare-and-set on the old token as any caller's takeover, so of several
     * engines rescuing at once exactly one runs it.
     *
     * @param key the key whose runner died
     * @param target the registered target that re-runs it
     * @return the result, or {@code null} if the row was no longer RUNNING past its lease (it finished,
     *     or another engine took it over first)
     */
    RunOnceResult rescue(String key, RunOnceTarget target) {
        String owner = Owners.current(workerId);
        RunOnceResult claim =
                Jdbc.retryingDeadlocks(() -> jdbc.withConnection("Rescue run-once key '" + key + "'", c -> {
                    Row row = select(c, key);
                    if (row == null || !row.status().equals(GuardStatus.RUNNING.name()) || row.live()) {
                        return null;
                    }
                    DbClock.Grant grant = clock.draw(c, target.lease().toMillis());
                    Lease ours = new Lease(key, grant.token(), owner, grant.expiresAt());
                    if (!rerun(c, ours, target.name(), row)) {
                        return null;
                    }
                    log.warn(
                            "Run-once key '{}': its runner {} (token {}) died mid-run (lease ended at {}); running it again"
                                    + " with target '{}'",
                            key,
                            row.owner(),
                            row.token(),
                            row.expiresAt(),
                            target.name());
                    return new RunOnceResult(key, Outcome.TOOK_OVER, ours, null);
                }));
        return claim == null ? null : run(claim, target.lease(), target.work());
    }

    /** Claims the key, or says why not: RAN or TOOK_OVER carry our grant, the skips carry theirs. */
    private RunOnceResult claim(Connection c, String key, String target, String owner, Duration lease)
            throws SQLException {
        for (int i = 0; i < MAX_TRIES; i++) {
            Row row = select(c, key);
            if (row != null && row.status().equals(GuardStatus.SUCCEEDED.name())) {
                return new RunOnceResult(key, Outcome.SKIPPED_DONE, null, null);
            }
            if (row != null && row.status().equals(GuardStatus.RUNNING.name()) && row.live()) {
                return new RunOnceResult(key, Outcome.SKIPPED_RUNNING, row.lease(key), null);
            }
            DbClock.Grant grant = clock.draw(c, lease.toMillis());
            Lease ours = new Lease(key, grant.token(), owner, grant.expiresAt());
            if (row == null) {
                if (insert(c, ours, target)) {
                    return new RunOnceResult(key, Outcome.RAN, ours, null);
                }
            } else if (rerun(c, ours, target, row)) {
                Outcome o = row.status().equals(GuardStatus.RUNNING.name()) ? Outcome.TOOK_OVER : Outcome.RAN;
                if (o == Outcome.TOOK_OVER) {
                    log.warn(
                            "Run-once key '{}': took over from {} (token {}), whose lease ended at {}",
                            io.dbtasks.StoredText.forLog(key),
                            row.owner(),
                            row.token(),
                            row.expiresAt());
                }
                return new RunOnceResult(key, o, ours, null);
            }
            // Another caller wrote the row between our read and our write: read it again.
        }
        throw new DbTasksException("Run-once key '" + key + "' changed hands " + MAX_TRIES
                + " times while being claimed; call runOnce again");
    }

    private RunOnceResult run(RunOnceResult claim, Duration lease, LeasedWork work) {
        Lease ours = claim.lease();
        long start = System.nanoTime();
        // Renewal waits for a renewal still in flight when the work returns, so its interrupt and warning
        // come before the result. The guarded completion then decides: a renewal that found the row
        // taken over used the same guard (key, token, RUNNING), so the completion changes nothing and
        // the result is LEASE_LOST. A lease only presumed lost (renewals failed, or a stall) whose row
        // is still ours is recorded and reported as the row says.
        Renewal.Outcome outcome = renewal.run(ours, lease, () -> renew(ours, lease), work);
        long durationMs = (System.nanoTime() - start) / 1_000_000;
        Throwable error = outcome.error();
        boolean recorded =
                finish(ours, (error == null ? GuardStatus.SUCCEEDED : GuardStatus.FAILED).name(), error, durationMs);
        RunOnceResult result;
        if (!recorded) {
            log.warn(
                    "Run-once key '{}' (token {}) was taken over while its work ran; its outcome was discarded",
                    io.dbtasks.StoredText.forLog(ours.name()),
                    ours.token());
            result = new RunOnceResult(ours.name(), Outcome.LEASE_LOST, ours, error);
        } else if (error != null) {
            log.warn(
                    "Run-once key '{}' (token {}) failed; a later call runs it again",
                    io.dbtasks.StoredText.forLog(ours.name()),
                    ours.token(),
                    error);
            result = new RunOnceResult(ours.name(), Outcome.FAILED, ours, error);
        } else {
            result = claim;
        }
        if (error instanceof Error e) {
            throw e;
        }
        return result;
    }

    private boolean renew(Lease ours, Duration lease) {
        return Jdbc.retryingDeadlocks(() -> jdbc.withConnection("Renew run-once key '" + ours.name() + "'", c -> {
            try (PreparedStatement ps = c.prepareStatement(renewSql)) {
                ps.setLong(1, lease.toMillis());
                ps.setString(2, ours.name());
                ps.setLong(3, ours.token());
                return Jdbc.changedOne(ps.executeUpdate(), "renewal of run-once key '" + ours.name() + "'");
            }
        }));
    }

    private boolean finish(Lease ours, String status, Throwable error, long durationMs) {
        return Jdbc.retryingDeadlocks(() ->
                jdbc.withConnection("Record run-once key '" + ours.name() + "' " + status, c -> {
                    try (PreparedStatement ps = c.prepareStatement(finishSql)) {
                        ps.setString(1, status);
                        ps.setString(2, error == null ? null : Attempts.reason(error));
                        ps.setLong(3, durationMs);
                        ps.setString(4, ours.name());
                        ps.setLong(5, ours.token());
                        return Jdbc.changedOne(ps.executeUpdate(), "completion of run-once key '" + ours.name() + "'");
                    }
                }));
    }

    private record Row(String status, long token, String owner, Instant expiresAt, boolean live) {
        Lease lease(String key) {
            return new Lease(key, token, owner, expiresAt);
        }
    }

    private Row select(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(selectSql)) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new Row(
                        rs.getString("status"),
                        rs.getLong("token"),
                        rs.getString("owner"),
                        dialect.getInstant(rs, "lease_expires_at"),
                        rs.getInt("live") == 1);
            }
        }
    }

    private boolean insert(Connection c, Lease ours, String target) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(insertSql)) {
            ps.setString(1, ours.name());
            ps.setLong(2, ours.token());
            ps.setString(3, ours.owner());
            dialect.setInstant(ps, 4, ours.expiresAt());
            ps.setString(5, target);
            return dialect.insertIfAbsent(ps);
        }
    }

    private boolean rerun(Connection c, Lease ours, String target, Row row) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(rerunSql)) {
            ps.setLong(1, ours.token());
            ps.setString(2, ours.owner());
            dialect.setInstant(ps, 3, ours.expiresAt());
            ps.setString(4, target);
            ps.setString(5, ours.name());
            ps.setLong(6, row.token());
            ps.setString(7, row.status());
            return Jdbc.changedOne(ps.executeUpdate(), "claim of run-once key '" + ours.name() + "'");
        }
    }
}
