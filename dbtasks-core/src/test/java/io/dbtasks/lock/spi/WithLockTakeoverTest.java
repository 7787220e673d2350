package io.dbtasks.lock.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeaseLostException;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A takeover that only a renewal still in flight when the work returns finds
 * must be reported. The renewer is forced to be in flight: it blocks until {@code withLock} has
 * returned (or 400 ms), and only then asks the real H2 store, which says the lease is gone.
 */
class WithLockTakeoverTest {
    private static final Duration LEASE = Duration.ofMillis(1500); // renewals every 500 ms

    private DbTasks a;
    private DbTasks b;
    private final String name = "lock-" + UUID.randomUUID();

    @BeforeEach
    void setUp() {
        DbTasks.builder(TestDatabase.H2.dataSource()).workers(false).build().close(); // migrate
        TestDatabase.H2.clear();
        a = DbTasks.builder(TestDatabase.H2.dataSource())
                .workers(false)
                .migrate(false)
                .workerId("A")
                .build();
        b = DbTasks.builder(TestDatabase.H2.dataSource())
                .workers(false)
                .migrate(false)
                .workerId("B")
                .build();
    }

    @AfterEach
    void tearDown() {
        a.stop(Duration.ofSeconds(1));
        b.stop(Duration.ofSeconds(1));
    }

    /** The real store of A, whose renewals wait for a signal before they ask it. */
    private static final class HeldBackRenewals extends AbstractLeaseLocks {
        final AbstractLeaseLocks real;
        final CountDownLatch renewing = new CountDownLatch(1);
        final CountDownLatch returned = new CountDownLatch(1);

        HeldBackRenewals(AbstractLeaseLocks real, Renewal renewal) {
            super("A", renewal);
            this.real = real;
        }

        @Override
        public Optional<Lease> tryAcquire(String name, Duration lease) {
            return real.tryAcquire(name, lease);
        }

        @Override
        public Optional<Lease> renew(Lease lease, Duration duration) {
            renewing.countDown();
            try {
                returned.await(400, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return real.renew(lease, duration);
        }

        @Override
        public boolean release(Lease lease) {
            return real.release(lease);
        }

        @Override
        public Optional<Lease> find(String name) {
            return real.find(name);
        }

        @Override
        protected long joinLine(String name, String owner, Duration ttl) {
            return real.joinLine(name, owner, ttl);
        }

        @Override
        protected long placeInLine(String name, long ticket, Duration ttl) {
            return real.placeInLine(name, ticket, ttl);
        }

        @Override
        protected void leaveLine(String name, long ticket) {
            real.leaveLine(name, ticket);
        }
    }

    private void expireNow(String lockName) throws Exception {
        try (Connection c = TestDatabase.H2.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("UPDATE dbtasks_lock SET expires_at = ? WHERE name = ?")) {
            ps.setTimestamp(1, Timestamp.from(Instant.parse("2000-01-01T00:00:00Z")));
            ps.setString(2, lockName);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }

    @Test
    void withLockReportsTakeoverFoundByInFlightRenewal() throws Exception {
        try (Renewal renewal = new Renewal("test-renewal-")) {
            HeldBackRenewals locks = new HeldBackRenewals((AbstractLeaseLocks) a.locks(), renewal);
            AtomicReference<Lease> taker = new AtomicReference<>();
            assertThatThrownBy(() -> {
                        try {
                            locks.withLock(name, LEASE, held -> {
                                assertThat(locks.renewing.await(5, TimeUnit.SECONDS))
                                        .isTrue();
                                // A stalled past its lease: B takes over while A's renewal is on its way.
                                expireNow(name);
                                taker.set(b.locks()
                                        .tryAcquire(name, Duration.ofSeconds(30))
                                        .orElseThrow());
                            });
                        } finally {
                            locks.returned.countDown();
                        }
                    })
                    .isInstanceOf(LeaseLostException.class);
            assertThat(b.locks().find(name)).contains(taker.get());
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        }
    }

    @Test
    void inFlightRenewalThatFindsTheLeaseGoneIsReportedAsLost() {
        try (Renewal renewal = new Renewal("test-renewal-")) {
            CountDownLatch renewing = new CountDownLatch(1);
            CountDownLatch returned = new CountDownLatch(1);
            Lease lease = new Lease(name, 1, "A/main", Instant.now().plus(LEASE));
            Renewal.Outcome outcome;
            try {
                outcome = renewal.run(
                        lease,
                        LEASE,
                        () -> {
                            renewing.countDown();
                            returned.await(400, TimeUnit.MILLISECONDS);
                            return false; // taken over
                        },
                        l -> assertThat(renewing.await(5, TimeUnit.SECONDS)).isTrue());
            } finally {
                returned.countDown();
            }
            assertThat(outcome.error()).isNull();
            assertThat(outcome.lost())
                    .as("the renewal in flight found the lease gone")
                    .isTrue();
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        }
    }
}
