package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeaseLocks;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The lease-lock contract on {@code dbtasks_lock}; one engine without workers per process. */
abstract class JdbcLeaseLockContract extends LeaseLockContract {
    private final List<DbTasks> engines = new ArrayList<>();

    protected abstract TestDatabase database();

    @BeforeEach
    void prepareDatabase() {
        Assumptions.assumeTrue(database().required(), database() + " is not in dbtasks.test.databases");
        DbTasks.builder(database().dataSource()).workers(false).build().close(); // migrate
        database().clear();
    }

    @AfterEach
    void stopEngines() {
        engines.forEach(e -> e.stop(Duration.ofSeconds(1)));
    }

    @Override
    protected LeaseLocks locksOf(String process) {
        DbTasks e = DbTasks.builder(database().dataSource())
                .workers(false)
                .migrate(false)
                .workerId(process)
                .build();
        engines.add(e);
        return e.locks();
    }

    // Fencing a read-modify-write. The resource is a counter row carrying the last
    // token that wrote it; a stall is a lease cut short (300 ms), so B takes over without waiting long.
    private static final Duration SHORT = Duration.ofMillis(300);

    private void createCounter() throws SQLException {
        try (Connection c = database().dataSource().getConnection();
                Statement st = c.createStatement()) {
            try {
                st.execute("DROP TABLE fenced_counter");
            } catch (SQLException absent) {
                // first run
            }
            st.execute("CREATE TABLE fenced_counter (id INT PRIMARY KEY, val BIGINT NOT NULL,"
                    + " last_token BIGINT NOT NULL)");
            st.execute("INSERT INTO fenced_counter (id, val, last_token) VALUES (1, 0, 0)");
        }
    }

    private long counter() throws SQLException {
        try (Connection c = database().dataSource().getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT val FROM fenced_counter WHERE id = 1")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static long read(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT val FROM fenced_counter WHERE id = 1")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The documented recipe (docs/toolkit.md), step 1: claim the row for this token; 0 rows = a newer holder wrote. */
    private static boolean bump(Connection c, long token) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("UPDATE fenced_counter SET last_token = ? WHERE id = 1 AND last_token < ?")) {
            ps.setLong(1, token);
            ps.setLong(2, token);
            return ps.executeUpdate() == 1;
        }
    }

    /** The documented recipe (docs/toolkit.md), step 3: write, still guarded by our token. */
    private static boolean writeOwn(Connection c, long token, long value) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("UPDATE fenced_counter SET val = ? WHERE id = 1 AND last_token = ?")) {
            ps.setLong(1, value);
            ps.setLong(2, token);
            return ps.executeUpdate() == 1;
        }
    }

    /** The recipe in one transaction: bump the token, read, write; false if refused. */
    private boolean fencedIncrement(Connection c, long token) throws SQLException {
        c.setAutoCommit(false);
        try {
            if (!bump(c, token)) {
                c.rollback();
                return false;
            }
            long v = read(c);
            boolean wrote = writeOwn(c, token, v + 1);
            c.commit();
            return wrote;
        } finally {
            c.setAutoCommit(true);
        }
    }

    @Test
    void fencedReadModifyWriteLosesNoUpdate() throws Exception {
        createCounter();
        LeaseLocks a = locksOf("A");
        LeaseLocks b = locksOf("B");
        Lease leaseA = a.tryAcquire(name, SHORT).orElseThrow();
        try (Connection ca = database().dataSource().getConnection();
                Connection cb = database().dataSource().getConnection()) {
            ca.setAutoCommit(false);
            assertThat(bump(ca, leaseA.token())).isTrue();
            long seenByA = read(ca); // A reads, then stalls past its lease
            Thread.sleep(SHORT.toMillis() + 200);
            Lease leaseB = b.tryAcquire(name, Duration.ofSeconds(30)).orElseThrow();
            assertThat(leaseB.token()).isGreaterThan(leaseA.token());
            // B increments while A's transaction is open: its bump waits for A's row lock.
            CompletableFuture<Boolean> bIncrements = CompletableFuture.supplyAsync(() -> {
                try {
                    return fencedIncrement(cb, leaseB.token());
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(200); // lets B reach the row lock; the outcome does not depend on it
            assertThat(writeOwn(ca, leaseA.token(), seenByA + 1)).isTrue();
            ca.commit(); // A's late write commits just before B's, as in the finding
            assertThat(bIncrements.get(20, TimeUnit.SECONDS)).isTrue();
            assertThat(counter()).as("both increments counted").isEqualTo(2);

            // A comes back once more, after B wrote: the recipe refuses it before it reads.
            ca.setAutoCommit(true);
            assertThat(fencedIncrement(ca, leaseA.token())).isFalse();
            assertThat(counter()).isEqualTo(2);
        }
    }

    @Test
    void naiveFencedReadThenWriteLosesAnUpdate() throws Exception {
        createCounter();
        LeaseLocks a = locksOf("A");
        LeaseLocks b = locksOf("B");
        Lease leaseA = a.tryAcquire(name, SHORT).orElseThrow();
        try (Connection c = database().dataSource().getConnection()) {
            long seenByA = read(c);
            Thread.sleep(SHORT.toMillis() + 200);
            Lease leaseB = b.tryAcquire(name, Duration.ofSeconds(30)).orElseThrow();
            long seenByB = read(c);
            String fencedWrite = "UPDATE fenced_counter SET val = ?, last_token = ? WHERE id = 1 AND last_token < ?";
            for (long[] w : new long[][] {{seenByA + 1, leaseA.token()}, {seenByB + 1, leaseB.token()}}) {
                try (PreparedStatement ps = c.prepareStatement(fencedWrite)) {
                    ps.setLong(1, w[0]);
                    ps.setLong(2, w[1]);
                    ps.setLong(3, w[1]);
                    assertThat(ps.executeUpdate())
                            .as("the fence accepts both writes")
                            .isEqualTo(1);
                }
            }
        }
        assertThat(counter())
                .as("one increment lost: fencing the write alone is not enough")
                .isEqualTo(1);
    }
}
