package io.dbtasks.internal.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.internal.dialect.Claimable;
import io.dbtasks.internal.dialect.PostgresDialect;
import io.dbtasks.internal.limit.JdbcLimits;
import io.dbtasks.internal.limit.LimitSet;
import io.dbtasks.internal.limit.RateWindow;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.limit.Limit;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.ThrowingSupplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * On PostgreSQL a claim in claim order takes the queue's lock exclusively instead of key locks, and
 * if its batch fits within the queue's smallest limit counts the queue's RUNNING tasks instead of
 * each key's; a claim that locks keys takes the queue's lock shared first. These tests hold one side
 * of that lock, or a key's, open on a connection of their own and watch the other side.
 */
class PostgresQueueLockTest {
    private static final String QUEUE = "bound";
    private static final String OWNER = "bound-test";
    private static final long LEASE_MILLIS = 60_000;

    private final PostgresDialect dialect = new PostgresDialect();
    private final ExecutorService executor = Executors.newSingleThreadExecutor();
    private DataSource ds;
    private JdbcLimits limits;
    private LimitSet set;

    @BeforeEach
    void schema() {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "PostgreSQL is not in dbtasks.test.databases");
        ds = TestDatabase.POSTGRESQL.dataSource();
        DbTasks.builder(ds).workers(false).build().close();
        TestDatabase.POSTGRESQL.clear();
        limits = new JdbcLimits(new Jdbc(ds), dialect);
    }

    @AfterEach
    void clear() {
        executor.shutdownNow();
        if (TestDatabase.POSTGRESQL.required()) {
            TestDatabase.POSTGRESQL.clear();
        }
    }

    @Test
    void aClaimWithinTheQueueBoundTakesNoKeyLock() throws Exception {
        KeyedClaim claim = oneRunning(100, 5);
        try (Connection holder = ds.getConnection()) {
            holder.setAutoCommit(false);
            lockKey(holder, "k");
            // A claim that counted keys would wait for the key's lock: this one counts the queue.
            List<Long> started = inTime(() -> claimInOrder(claim, set, 2));
            assertThat(started).hasSize(2);
            holder.rollback();
        }
        assertThat(running()).isEqualTo(3);
    }

    @Test
    void aClaimCountingTheQueueWaitsForAClaimCountingKeysAndSeesWhatItStarted() throws Exception {
        KeyedClaim claim = oneRunning(3, 6);
        long[] pending = pendingIds();
        try (Connection holder = ds.getConnection()) {
            holder.setAutoCommit(false);
            // A claim counting keys, between its key locks and its commit: the queue's lock shared,
            // and one more task of the key started.
            try (PreparedStatement ps =
                    holder.prepareStatement(dialect.keyLocks().orElseThrow().trying())) {
                ps.setString(1, QUEUE);
                ps.setArray(2, holder.createArrayOf("text", new Object[] {"k"}));
                try (ResultSet rs = ps.executeQuery()) {
                    assertThat(rs.next()).as("the key was free").isFalse();
                }
            }
            startInTransaction(holder, pending[0], pending[1]);
            // Two RUNNING committed: a claim of one counting the queue without the lock would start a
            // fourth task once the holder commits. It waits instead, then counts three.
            Future<List<Long>> waiting = executor.submit(() -> claimInOrder(claim, set, 1));
            Thread.sleep(500);
            assertThat(waiting).as("the claim waits for the queue's lock").isNotDone();
            holder.commit();
            assertThat(waiting.get(10, TimeUnit.SECONDS)).isEmpty();
        }
        assertThat(running()).isEqualTo(3);
    }

    @Test
    void aClaimInOrderCountingKeysTakesNoKeyLockAndKeepsTheLimit() throws Exception {
        KeyedClaim claim = oneRunning(3, 6, "other");
        try (Connection holder = ds.getConnection()) {
            holder.setAutoCommit(false);
            lockKey(holder, "k");
            // Asks for more than the smallest limit: counts the keys of the tasks it locks.
            KeyedClaim.Result<Long> result = inTime(() -> {
                try (Connection c = ds.getConnection()) {
                    return claim.claimInOrder(
                            c, QUEUE, Claimable.ANY, set, 10, OWNER, LEASE_MILLIS, rs -> rs.getLong("id"));
                }
            });
            assertThat(result.rows()).as("two of k, and the task of other").hasSize(3);
            assertThat(result.heldBack()).as("three of k left behind its limit").isTrue();
            holder.rollback();
        }
        assertThat(running()).isEqualTo(4);
    }

    /** How a claim that counts keys runs. */
    enum CountingKeys {
        /** In claim order under the queue's lock (auto-commit). */
        IN_ORDER,
        /** In claim order in the caller's transaction, under key locks. */
        IN_ORDER_IN_TRANSACTION,
        /** Round robin over keys, under key locks. */
        ROUND_ROBIN
    }

    @ParameterizedTest
    @EnumSource(CountingKeys.class)
    void aClaimCountingKeysWaitsForAClaimCountingTheQueue(CountingKeys how) throws Exception {
        KeyedClaim claim = oneRunning(3, 6);
        try (Connection holder = ds.getConnection()) {
            holder.setAutoCommit(false);
            // A claim counting the queue, between its lock and its implicit commit: two more started.
            try (Statement s = holder.createStatement()) {
                s.execute("SELECT pg_advisory_xact_lock(" + PostgresDialect.QUEUE_LOCK_SPACE + ", hashtext('" + QUEUE
                        + "'))");
            }
            long[] pending = pendingIds();
            startInTransaction(holder, pending[0], pending[1]);
            // Asks for 5, more than the limit leaves room for the queue's count, so it counts keys.
            Future<List<Long>> waiting = executor.submit(() -> switch (how) {
                case IN_ORDER -> claimInOrder(claim, set, 5);
                case IN_ORDER_IN_TRANSACTION -> claimInOrderInTransaction(claim, set, 5);
                case ROUND_ROBIN -> roundRobin(claim, set, 5);
            });
            Thread.sleep(500);
            assertThat(waiting)
                    .as("the claim counting keys waits for the queue's lock")
                    .isNotDone();
            holder.commit();
            assertThat(waiting.get(10, TimeUnit.SECONDS)).isEmpty();
        }
        assertThat(running()).isEqualTo(3);
    }

    /**
     * A claim within the queue's bound trusts the bound the last one left only while no claim started
     * tasks under key locks since: after such a claim of each kind started one more of k, the fresh
     * bound of two RUNNING would start a fourth task past the limit of 3.
     */
    @ParameterizedTest
    @EnumSource(CountingKeys.class)
    void aClaimWithinTheBoundCountsAgainAfterAClaimThatCountedKeys(CountingKeys how) throws Exception {
        KeyedClaim claim = oneRunning(3, 6);
        assertThat(claimInOrder(claim, set, 1)).hasSize(1);
        assertThat(bound()).as("the bound of the claim within it").isEqualTo(2);
        // Asks for 5, more than the limit leaves room for the queue's count, so it counts keys.
        List<Long> started = switch (how) {
            case IN_ORDER -> claimInOrder(claim, set, 5);
            case IN_ORDER_IN_TRANSACTION -> claimInOrderInTransaction(claim, set, 5);
            case ROUND_ROBIN -> roundRobin(claim, set, 5);
        };
        assertThat(started).as("one more of k, up to its limit").hasSize(1);
        freshenBound();
        assertThat(claimInOrder(claim, set, 1)).isEmpty();
        assertThat(running()).isEqualTo(3);
    }

    /**
     * A claim under key locks takes its value of the sequence only once the queue's shared lock is
     * granted. Here it waits for the holder of the exclusive lock, which, as a claim within the bound
     * does, writes a bound with the sequence's value as it reads it under that lock. Had the waiting
     * claim taken its value before its lock, that bound would look current after the waiting claim
     * started two more of k, and the claim within it would start a fourth task past the limit of 3.
     */
    @ParameterizedTest
    @EnumSource(
            value = CountingKeys.class,
            names = {"IN_ORDER_IN_TRANSACTION", "ROUND_ROBIN"})
    void aClaimUnderKeyLocksTakesItsSequenceValueAfterTheQueueLock(CountingKeys how) throws Exception {
        KeyedClaim claim = oneRunning(3, 6);
        long seq;
        try (Connection holder = ds.getConnection()) {
            holder.setAutoCommit(false);
            try (Statement s = holder.createStatement()) {
                s.execute("SELECT pg_advisory_xact_lock(" + PostgresDialect.QUEUE_LOCK_SPACE + ", hashtext('" + QUEUE
                        + "'))");
            }
            seq = keyClaimSeq(holder);
            Future<List<Long>> waiting = executor.submit(() -> how == CountingKeys.ROUND_ROBIN
                    ? roundRobin(claim, set, 5)
                    : claimInOrderInTransaction(claim, set, 5));
            Thread.sleep(500);
            assertThat(waiting)
                    .as("the claim under key locks waits for the queue's lock")
                    .isNotDone();
            assertThat(keyClaimSeq(holder))
                    .as("the waiting claim has not taken a value of the sequence")
                    .isEqualTo(seq);
            updateBound(
                    holder,
                    "claimed_seq = (SELECT last_value FROM dbtasks_key_claim_seq),"
                            + " counted_at = now() + INTERVAL '1 hour'");
            holder.commit();
            assertThat(waiting.get(10, TimeUnit.SECONDS)).as("two more of k").hasSize(2);
        }
        assertThat(claimInOrder(claim, set, 1)).isEmpty();
        assertThat(running()).isEqualTo(3);
    }

    private static long keyClaimSeq(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT last_value FROM dbtasks_key_claim_seq")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * While the bound is fresh a claim within it adds what it starts to the bound without counting;
     * once the bound is older than its age limit it counts, and so sees a start no claim of the queue
     * accounted for (one by an engine that does not know the queue's limits yet).
     */
    @Test
    void aClaimWithinTheBoundTrustsAFreshBoundAndCountsAnOldOne() throws Exception {
        KeyedClaim claim = oneRunning(6, 8);
        assertThat(claimInOrder(claim, set, 1)).hasSize(1);
        assertThat(bound()).isEqualTo(2);
        long[] pending = pendingIds();
        try (Connection c = ds.getConnection()) {
            startInTransaction(c, pending[0], pending[1], pending[2]);
        }
        freshenBound();
        assertThat(claimInOrder(claim, set, 1)).hasSize(1);
        assertThat(bound())
                .as("the bound it trusted and the one it started, not a count of six")
                .isEqualTo(3);
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "SELECT counted_at > now() + INTERVAL '30 minutes' FROM dbtasks_queue_running")) {
            assertThat(rs.next() && rs.getBoolean(1))
                    .as("a trusted bound keeps the time of its count")
                    .isTrue();
        }
        updateBound("counted_at = now() - INTERVAL '1 second'");
        // Counted: six RUNNING, past 6 - 1, so it starts none.
        assertThat(claimInOrder(claim, set, 1)).isEmpty();
        assertThat(running()).isEqualTo(6);
    }

    /** A bound past what the claim may start is counted again rather than taken as the count. */
    @Test
    void aClaimWithinTheBoundCountsABoundPastTheLimit() throws Exception {
        KeyedClaim claim = oneRunning(3, 6);
        assertThat(claimInOrder(claim, set, 1)).hasSize(1);
        updateBound("running_bound = 100, counted_at = now() + INTERVAL '1 hour'");
        assertThat(claimInOrder(claim, set, 1)).hasSize(1);
        assertThat(bound())
                .as("counted again: two RUNNING, and the one started")
                .isEqualTo(3);
        assertThat(running()).isEqualTo(3);
    }

    /** @return the queue's running bound, as the last claim within the bound left it, or -1 */
    private long bound() throws SQLException {
        try (Connection c = ds.getConnection();
                PreparedStatement ps =
                        c.prepareStatement("SELECT running_bound FROM dbtasks_queue_running WHERE queue = ?")) {
            ps.setString(1, QUEUE);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        }
    }

    /**
     * Makes the queue's bound, if it has one, fresh for the next hour, so that only a claim that
     * voided it can make the next claim count.
     */
    private void freshenBound() throws SQLException {
        updateBound("counted_at = now() + INTERVAL '1 hour'");
    }

    /** Sets the columns of the queue's bound row as {@code assignments} (an SQL SET list) has them. */
    private void updateBound(String assignments) throws SQLException {
        try (Connection c = ds.getConnection()) {
            updateBound(c, assignments);
        }
    }

    private void updateBound(Connection c, String assignments) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("UPDATE dbtasks_queue_running SET " + assignments + " WHERE queue = ?")) {
            ps.setString(1, QUEUE);
            ps.executeUpdate();
        }
    }

    /**
     * Sets a limit for every key, inserts {@code pending} tasks of key k (and one of each of {@code
     * others}) and starts one task of k with a first claim, which also asks the server for its
     * isolation level (claims under the queue's lock need it known); {@link #set} is the queue's
     * limits after.
     */
    private KeyedClaim oneRunning(int limit, int pending, String... others) throws SQLException {
        limits.set(Limit.maxRunning(QUEUE, Limit.EVERY_KEY, limit));
        insertPending("k", pending);
        for (String other : others) {
            insertPending(other, 1);
        }
        KeyedClaim claim = new KeyedClaim(dialect, new RateWindow(dialect));
        set = limits.forQueue(QUEUE);
        assertThat(claimInOrder(claim, set, 1)).hasSize(1);
        return claim;
    }

    private List<Long> claimInOrder(KeyedClaim claim, LimitSet set, int limit) throws SQLException {
        try (Connection c = ds.getConnection()) {
            return claim.claimInOrder(c, QUEUE, Claimable.ANY, set, limit, OWNER, LEASE_MILLIS, rs -> rs.getLong("id"))
                    .rows();
        }
    }

    private List<Long> claimInOrderInTransaction(KeyedClaim claim, LimitSet set, int limit) throws SQLException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            List<Long> rows = claim.claimInOrder(
                            c, QUEUE, Claimable.ANY, set, limit, OWNER, LEASE_MILLIS, rs -> rs.getLong("id"))
                    .rows();
            c.commit();
            return rows;
        }
    }

    private List<Long> roundRobin(KeyedClaim claim, LimitSet set, int limit) throws SQLException {
        try (Connection c = ds.getConnection()) {
            return claim.claim(c, QUEUE, Claimable.ANY, set, limit, OWNER, LEASE_MILLIS, rs -> rs.getLong("id"))
                    .rows();
        }
    }

    private <T> T inTime(ThrowingSupplier<T> call) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        executor.submit(() -> {
            try {
                f.complete(call.get());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        });
        try {
            return f.get(5, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("the claim waited for a lock", e);
        }
    }

    private void lockKey(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_advisory_xact_lock(" + PostgresDialect.KEY_LOCK_SPACE
                + ", hashtext(?::text || chr(1) || ?::text))")) {
            ps.setString(1, QUEUE);
            ps.setString(2, key);
            ps.execute();
        }
    }

    private void insertPending(String key, int n) throws SQLException {
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement("INSERT INTO dbtasks_task (queue, kind, status, attempt,"
                        + " max_attempts, backoff, backoff_initial_ms, backoff_max_ms, backoff_multiplier,"
                        + " backoff_jitter, concurrency_key, run_at, created_at, updated_at, history_day)"
                        + " SELECT ?, 'bound.work', 'PENDING', 0, 3, 'FIXED', 1000, 1000, 1.0, 0.0, ?,"
                        + " now() - INTERVAL '1 second', now(), now(), 0 FROM generate_series(1, ?)")) {
            ps.setString(1, QUEUE);
            ps.setString(2, key);
            ps.setInt(3, n);
            ps.executeUpdate();
        }
    }

    private long[] pendingIds() throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT id FROM dbtasks_task WHERE status = 'PENDING' ORDER BY id")) {
            return resultIds(rs);
        }
    }

    private static long[] resultIds(ResultSet rs) throws SQLException {
        java.util.List<Long> ids = new java.util.ArrayList<>();
        while (rs.next()) {
            ids.add(rs.getLong(1));
        }
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    /** Starts the tasks as a claim does, in the holder's open transaction. */
    private void startInTransaction(Connection holder, long... ids) throws SQLException {
        try (PreparedStatement ps =
                holder.prepareStatement("UPDATE dbtasks_task SET " + dialect.claimSetList() + " WHERE id = ANY(?)")) {
            ps.setString(1, "holder");
            ps.setLong(2, LEASE_MILLIS);
            ps.setArray(
                    3,
                    holder.createArrayOf(
                            "bigint", java.util.Arrays.stream(ids).boxed().toArray()));
            assertThat(ps.executeUpdate()).isEqualTo(ids.length);
        }
    }

    private long running() throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'RUNNING'")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
