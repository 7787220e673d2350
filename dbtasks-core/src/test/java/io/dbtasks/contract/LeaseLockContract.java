package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeaseLocks;
import io.dbtasks.lock.LeaseLostException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link LeaseLocks} store must show, JDBC on each database and Redis alike.
 * {@link #locksOf} gives one store per simulated process; each test uses a lock name of its own.
 */
public abstract class LeaseLockContract {
    /** A lock store standing for process {@code process}: its owner names start with it. */
    protected abstract LeaseLocks locksOf(String process);

    protected final String name = "lock-" + UUID.randomUUID();

    /** A resource that accepts a write only with a greater token than the last accepted one. */
    static final class FencedRegister {
        private long lastToken;
        private String value;

        synchronized boolean write(long token, String v) {
            if (token <= lastToken) {
                return false;
            }
            lastToken = token;
            value = v;
            return true;
        }

        synchronized String value() {
            return value;
        }
    }

    @Test
    void freeLockIsGrantedWithTokenOwnerAndExpiry() {
        LeaseLocks a = locksOf("A");
        Instant before = Instant.now();
        Lease l = a.tryAcquire(name, Duration.ofSeconds(5)).orElseThrow();
        assertThat(l.name()).isEqualTo(name);
        assertThat(l.owner()).startsWith("A/");
        assertThat(l.token()).isPositive();
        // The store's clock decides; allow it a little skew from ours.
        assertThat(l.expiresAt()).isBetween(before.plusSeconds(4), Instant.now().plusSeconds(6));
        assertThat(a.find(name)).contains(l);
    }

    @Test
    void heldLockIsNotGrantedToAnotherUntilReleased() {
        LeaseLocks a = locksOf("A");
        LeaseLocks b = locksOf("B");
        Lease held = a.tryAcquire(name, Duration.ofSeconds(30)).orElseThrow();
        assertThat(b.tryAcquire(name, Duration.ofSeconds(30))).isEmpty();
        assertThat(a.tryAcquire(name, Duration.ofSeconds(30)))
                .as("not re-entrant")
                .isEmpty();
        assertThat(a.release(held)).isTrue();
        Lease next = b.tryAcquire(name, Duration.ofSeconds(30)).orElseThrow();
        assertThat(next.token()).isGreaterThan(held.token());
        assertThat(next.owner()).startsWith("B/");
    }

    @Test
    void expiredLeaseIsTakenOverWithAHigherTokenAndTheStaleTokenChangesNothing() throws Exception {
        LeaseLocks a = locksOf("A");
        LeaseLocks b = locksOf("B");
        Lease stale = a.tryAcquire(name, Duration.ofMillis(300)).orElseThrow();
        Thread.sleep(450);
        assertThat(a.find(name)).as("an expired lease is free").isEmpty();
        Lease current = b.tryAcquire(name, Duration.ofSeconds(30)).orElseThrow();
        assertThat(current.token()).isGreaterThan(stale.token());

        assertThat(a.release(stale)).as("release with a stale token").isFalse();
        assertThat(a.renew(stale, Duration.ofSeconds(30)))
                .as("renew with a stale token")
                .isEmpty();
        assertThat(b.find(name)).contains(current);
    }

    @Test
    void renewExtendsALiveLeaseAndNotAReleasedOne() throws Exception {
        LeaseLocks a = locksOf("A");
        Lease l = a.tryAcquire(name, Duration.ofMillis(800)).orElseThrow();
        Lease renewed = a.renew(l, Duration.ofSeconds(10)).orElseThrow();
        assertThat(renewed.token()).isEqualTo(l.token());
        assertThat(renewed.owner()).isEqualTo(l.owner());
        assertThat(renewed.expiresAt()).isAfter(l.expiresAt().plusSeconds(5));
        Thread.sleep(1000);
        assertThat(a.find(name)).as("held past the first expiry").contains(renewed);
        assertThat(locksOf("B").tryAcquire(name, Duration.ofSeconds(1))).isEmpty();

        assertThat(a.release(renewed)).isTrue();
        assertThat(a.renew(renewed, Duration.ofSeconds(10)))
                .as("a released lease stays released")
                .isEmpty();
        assertThat(a.find(name)).isEmpty();
    }

    @Test
    void releaseFreesTheLockAtOnceAndOnlyOnce() {
        LeaseLocks a = locksOf("A");
        Lease l = a.tryAcquire(name, Duration.ofSeconds(30)).orElseThrow();
        assertThat(a.release(l)).isTrue();
        assertThat(a.release(l)).isFalse();
        assertThat(a.find(name)).isEmpty();
        assertThat(locksOf("B").tryAcquire(name, Duration.ofSeconds(30))).isPresent();
    }

    @Test
    void tokensStrictlyIncreasePerName() {
        List<LeaseLocks> stores = List.of(locksOf("A"), locksOf("B"));
        List<Long> tokens = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            LeaseLocks s = stores.get(i % 2);
            Lease l = s.tryAcquire(name, Duration.ofSeconds(30)).orElseThrow();
            tokens.add(l.token());
            assertThat(s.release(l)).isTrue();
        }
        assertThat(tokens).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void acquireWaitsUntilTheHolderReleases() throws Exception {
        LeaseLocks a = locksOf("A");
        Lease held = a.tryAcquire(name, Duration.ofSeconds(30)).orElseThrow();
        CompletableFuture<Optional<Lease>> local =
                CompletableFuture.supplyAsync(() -> acquire(a, Duration.ofSeconds(10)));
        CompletableFuture<Optional<Lease>> remote =
                CompletableFuture.supplyAsync(() -> acquire(locksOf("B"), Duration.ofSeconds(10)));
        Thread.sleep(300);
        assertThat(local).isNotDone();
        assertThat(remote).isNotDone();
        long released = System.nanoTime();
        assertThat(a.release(held)).isTrue();
        Lease first = CompletableFuture.anyOf(local, remote)
                .thenApply(o -> ((Optional<?>) o).map(Lease.class::cast).orElseThrow())
                .get(5, TimeUnit.SECONDS);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released))
                .as("woken or polled within the backoff cap")
                .isLessThan(1000);
        assertThat(first.token()).isGreaterThan(held.token());
        LeaseLocks firstStore = first.owner().startsWith("A/") ? a : locksOf("B");
        assertThat(firstStore.release(first)).isTrue();
        assertThat(local.get(5, TimeUnit.SECONDS)).isPresent();
        assertThat(remote.get(5, TimeUnit.SECONDS)).isPresent();
    }

    /**
     * Waiters are served in arrival order, across stores: the local waiter, which a release in its
     * own process wakes at once, still comes after the remote ones that came before it.
     */
    @Test
    void waitersAreServedFirstComeFirstServed() throws Exception {
        LeaseLocks a = locksOf("A");
        Lease held = a.tryAcquire(name, Duration.ofSeconds(30)).orElseThrow();
        List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (String process : List.of("B", "C", "A")) {
            LeaseLocks store = process.equals("A") ? a : locksOf(process);
            waiters.add(CompletableFuture.runAsync(() -> {
                Lease l = acquire(store, Duration.ofSeconds(20)).orElseThrow();
                order.add(process);
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                assertThat(store.release(l)).isTrue();
            }));
            Thread.sleep(300); // each joins the line before the next
        }
        assertThat(a.release(held)).isTrue();
        CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        assertThat(order).containsExactly("B", "C", "A");
    }

    @Test
    void acquireGivesUpAfterMaxWait() throws Exception {
        locksOf("A").tryAcquire(name, Duration.ofSeconds(30)).orElseThrow();
        long start = System.nanoTime();
        assertThat(locksOf("B").acquire(name, Duration.ofSeconds(30), Duration.ofMillis(300)))
                .isEmpty();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(290L, 2000L);
    }

    @Test
    void withLockRenewsWhileTheWorkRunsAndReleasesAfter() {
        LeaseLocks a = locksOf("A");
        LeaseLocks b = locksOf("B");
        AtomicReference<Optional<Lease>> seenByB = new AtomicReference<>();
        boolean ran = a.withLock(name, Duration.ofMillis(600), lease -> {
            Thread.sleep(1500); // 2.5 leases: only renewals keep it
            seenByB.set(b.tryAcquire(name, Duration.ofSeconds(1)));
        });
        assertThat(ran).isTrue();
        assertThat(seenByB.get()).as("still held after 2.5 leases").isEmpty();
        assertThat(a.find(name)).as("released after the work").isEmpty();
    }

    @Test
    void withLockDoesNotRunWhileTheLockIsHeldElsewhere() {
        locksOf("A").tryAcquire(name, Duration.ofSeconds(30)).orElseThrow();
        AtomicBoolean ran = new AtomicBoolean();
        assertThat(locksOf("B").withLock(name, Duration.ofSeconds(30), lease -> ran.set(true)))
                .isFalse();
        assertThat(ran).isFalse();
    }

    @Test
    void withLockInterruptsTheWorkWhenItsLeaseIsLost() {
        LeaseLocks a = locksOf("A");
        LeaseLocks b = locksOf("B");
        AtomicBoolean interrupted = new AtomicBoolean();
        long start = System.nanoTime();
        assertThatThrownBy(() -> a.withLock(name, Duration.ofMillis(900), lease -> {
                    // Someone ends our lease behind our back (as a takeover after a stall would).
                    CompletableFuture.runAsync(() -> b.release(lease));
                    try {
                        Thread.sleep(10_000);
                    } catch (InterruptedException e) {
                        interrupted.set(true);
                        throw e;
                    }
                }))
                .isInstanceOf(LeaseLostException.class)
                .hasCauseInstanceOf(InterruptedException.class);
        assertThat(interrupted).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3000);
        assertThat(Thread.currentThread().isInterrupted())
                .as("no interrupt leaks to the caller")
                .isFalse();
    }

    /**
     * A takeover between the last renewal and the end of the work is found only
     * by the release, which must not be ignored. The lease (30 s) is not renewed before the work
     * returns.
     */
    @Test
    void withLockReportsTakeoverFoundByRelease() {
        LeaseLocks a = locksOf("A");
        LeaseLocks b = locksOf("B");
        List<Lease> takers = new ArrayList<>();
        LeasedWorkThatIsTakenOver work = lease -> {
            // A stalled past its lease and B took over, as a pause would have it.
            assertThat(b.release(lease)).isTrue();
            takers.add(b.tryAcquire(name, Duration.ofSeconds(30)).orElseThrow());
        };
        assertThatThrownBy(() -> a.withLock(name, Duration.ofSeconds(30), work::run))
                .isInstanceOf(LeaseLostException.class);
        assertThat(b.find(name)).as("the new holder keeps the lock").contains(takers.get(0));
        assertThat(b.release(takers.get(0))).isTrue();
        assertThatThrownBy(() -> a.withLock(name, Duration.ofSeconds(30), Duration.ofSeconds(5), work::run))
                .isInstanceOf(LeaseLostException.class);
        assertThat(b.find(name)).contains(takers.get(1));
    }

    private interface LeasedWorkThatIsTakenOver {
        void run(Lease lease);
    }

    @Test
    void withLockRethrowsWhatTheWorkThrowsAndReleases() {
        LeaseLocks a = locksOf("A");
        assertThatThrownBy(() -> a.withLock(name, Duration.ofSeconds(30), lease -> {
                    throw new IllegalStateException("boom");
                }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("boom");
        assertThat(a.find(name)).isEmpty();
    }

    /**
     * The "32-minute scenario" with time compressed 600 times: lease 3 s (30 min), task 3.2 s
     * (32 min). A's lease runs out while it works; B, waiting, takes over at expiry and writes; A's
     * late write and release change nothing, and B's lease stays exactly as granted.
     */
    @Test
    void seedScenarioStaleHolderCannotTouchTheLeaseThatTookOver() throws Exception {
        LeaseLocks a = locksOf("A");
        LeaseLocks b = locksOf("B");
        FencedRegister register = new FencedRegister();
        long t0 = System.nanoTime();
        Lease leaseA = a.tryAcquire(name, Duration.ofSeconds(3)).orElseThrow();
        AtomicLong tookOverAtMs = new AtomicLong();
        CompletableFuture<Lease> bTakesOver = CompletableFuture.supplyAsync(() -> {
            Lease leaseB = acquire(b, Duration.ofSeconds(6)).orElseThrow();
            tookOverAtMs.set(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
            assertThat(register.write(leaseB.token(), "B")).isTrue();
            return leaseB;
        });
        Thread.sleep(3200); // A's task, which outlives its lease
        Lease leaseB = bTakesOver.get(5, TimeUnit.SECONDS); // "T30: B takes over" has happened

        assertThat(register.write(leaseA.token(), "A"))
                .as("A's late completion is fenced off")
                .isFalse();
        assertThat(a.release(leaseA)).as("A's late release").isFalse();
        assertThat(a.renew(leaseA, Duration.ofSeconds(3))).isEmpty();

        assertThat(leaseB.token()).isGreaterThan(leaseA.token());
        assertThat(b.find(name)).as("B's lease intact: token, owner, expiry").contains(leaseB);
        assertThat(register.value()).isEqualTo("B");
        assertThat(tookOverAtMs.get())
                .as("B took over at A's expiry, not before")
                .isBetween(2900L, 4200L);
        assertThat(b.release(leaseB)).isTrue();
    }

    @Test
    void namesDifferingOnlyInCaseAccentOrTrailingSpaceAreDistinctLocks() {
        LeaseLocks a = locksOf("A");
        for (String n : new String[] {name, name.toUpperCase(java.util.Locale.ROOT), name + "é", name + " "}) {
            assertThat(a.tryAcquire(n, Duration.ofSeconds(30))).as(n).isPresent();
        }
        assertThat(a.tryAcquire(name + "e", Duration.ofSeconds(30))).isPresent();
        assertThat(a.tryAcquire(name, Duration.ofSeconds(30))).isEmpty();
    }

    @Test
    void invalidArgumentsAreRejected() {
        LeaseLocks a = locksOf("A");
        assertThatThrownBy(() -> a.tryAcquire("", Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.tryAcquire("x".repeat(201), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.tryAcquire(name, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.acquire(name, Duration.ofSeconds(1), Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private Optional<Lease> acquire(LeaseLocks locks, Duration maxWait) {
        try {
            return locks.acquire(name, Duration.ofSeconds(30), maxWait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
