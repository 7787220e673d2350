package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.WorkFailedException;
import io.dbtasks.once.RunOnceGuards;
import io.dbtasks.once.RunOnceResult;
import io.dbtasks.once.RunOnceResult.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Run-once guards on {@code dbtasks_once}; run once per database by the subclasses. */
public abstract class RunOnceContract extends EngineHarness {
    private static final Duration LEASE = Duration.ofSeconds(30);

    private RunOnceGuards guards(String process) {
        return engine(b -> b.workers(false).migrate(false).workerId(process)).guards();
    }

    private String status(String key) {
        return single("SELECT status FROM dbtasks_once WHERE once_key = ?", key);
    }

    private String single(String query, Object arg) {
        try (var c = dataSource().getConnection();
                var ps = c.prepareStatement(query)) {
            ps.setObject(1, arg);
            try (var rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        } catch (Exception e) {
            throw new IllegalStateException(query, e);
        }
    }

    @Test
    void firstCallRunsAndRecordsSucceededWithTokenOwnerAndDuration() {
        AtomicInteger runs = new AtomicInteger();
        RunOnceResult r = guards("A").runOnce("report:2026-11-22", LEASE, lease -> {
            assertThat(lease.name()).isEqualTo("report:2026-11-22");
            runs.incrementAndGet();
            Thread.sleep(20);
        });
        assertThat(r.outcome()).isEqualTo(Outcome.RAN);
        assertThat(r.ran()).isTrue();
        assertThat(r.holder()).hasValueSatisfying(h -> assertThat(h).startsWith("A/"));
        assertThat(runs).hasValue(1);
        assertThat(status("report:2026-11-22")).isEqualTo("SUCCEEDED");
        assertThat(count(
                        "SELECT COUNT(*) FROM dbtasks_once WHERE once_key = ? AND token = ? AND owner = ?"
                                + " AND runs = 1 AND duration_ms >= 20 AND finished_at >= started_at"
                                + " AND last_error IS NULL AND lease_expires_at IS NULL",
                        "report:2026-11-22",
                        r.lease().token(),
                        r.lease().owner()))
                .isEqualTo(1);
    }

    @Test
    void succeededKeyIsSkippedWithoutRunning() {
        guards("A").runOnce("k", LEASE, lease -> {});
        AtomicInteger runs = new AtomicInteger();
        RunOnceResult again = guards("B").runOnce("k", LEASE, lease -> runs.incrementAndGet());
        assertThat(again.outcome()).isEqualTo(Outcome.SKIPPED_DONE);
        assertThat(again.ran()).isFalse();
        assertThat(again.holder()).isEmpty();
        assertThat(runs).hasValue(0);
    }

    @Test
    void keyRunningWithinItsLeaseIsSkippedAndNamesItsHolder() throws Exception {
        RunOnceGuards a = guards("A");
        CountDownLatch started = latch();
        CountDownLatch finish = latch();
        CompletableFuture<RunOnceResult> first = CompletableFuture.supplyAsync(() -> a.runOnce("k", LEASE, lease -> {
            started.countDown();
            awaitLatch(finish);
        }));
        awaitLatch(started);
        RunOnceResult second = guards("B").runOnce("k", LEASE, lease -> {
            throw new AssertionError("must not run");
        });
        assertThat(second.outcome()).isEqualTo(Outcome.SKIPPED_RUNNING);
        assertThat(second.holder()).hasValueSatisfying(h -> assertThat(h).startsWith("A/"));
        assertThat(second.lease().expiresAt()).isAfter(Instant.now());
        finish.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(Outcome.RAN);
        assertThat(first.get().lease().token()).isEqualTo(second.lease().token());
    }

    @Test
    void expiredRunningGuardIsTakenOverAndTheOldHolderCannotComplete() throws Exception {
        RunOnceGuards a = guards("A");
        CountDownLatch started = latch();
        CountDownLatch finish = latch();
        CompletableFuture<RunOnceResult> stale = CompletableFuture.supplyAsync(() -> a.runOnce("k", LEASE, lease -> {
            started.countDown();
            try {
                awaitLatch(finish);
            } catch (InterruptedException e) {
                // A's renewal found the row taken over and interrupted it; finish anyway, as a
                // handler that ignores interrupts would.
            }
        }));
        awaitLatch(started);
        // A stalls (a long GC pause, a SIGSTOP): its lease runs out by the database clock.
        assertThat(sql(
                        "UPDATE dbtasks_once SET lease_expires_at = ? WHERE once_key = 'k'",
                        Instant.now().minusSeconds(60)))
                .isEqualTo(1);

        RunOnceResult b = guards("B").runOnce("k", LEASE, lease -> {});
        assertThat(b.outcome()).isEqualTo(Outcome.TOOK_OVER);
        assertThat(b.ran()).isTrue();
        finish.countDown();
        RunOnceResult late = stale.get(10, TimeUnit.SECONDS);
        assertThat(late.outcome()).isEqualTo(Outcome.LEASE_LOST);
        assertThat(b.lease().token()).isGreaterThan(late.lease().token());

        // The row is B's, SUCCEEDED, untouched by A's late completion.
        assertThat(count(
                        "SELECT COUNT(*) FROM dbtasks_once WHERE once_key = 'k' AND status = 'SUCCEEDED'"
                                + " AND token = ? AND owner = ? AND runs = 2",
                        b.lease().token(),
                        b.lease().owner()))
                .isEqualTo(1);
        assertThat(guards("C").runOnce("k", LEASE, lease -> {}).outcome()).isEqualTo(Outcome.SKIPPED_DONE);
    }

    @Test
    void failedWorkIsRecordedReportedAndRunAgain() {
        RunOnceGuards a = guards("A");
        RunOnceResult failed = a.runOnce("k", LEASE, lease -> {
            throw new java.io.IOException("disk full");
        });
        assertThat(failed.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(failed.ran()).isFalse();
        assertThat(failed.error()).isInstanceOf(java.io.IOException.class).hasMessage("disk full");
        assertThatThrownBy(failed::throwIfFailed)
                .isInstanceOf(WorkFailedException.class)
                .hasCauseInstanceOf(java.io.IOException.class);
        assertThat(status("k")).isEqualTo("FAILED");
        assertThat(single("SELECT last_error FROM dbtasks_once WHERE once_key = ?", "k"))
                .contains("IOException")
                .contains("disk full");

        RunOnceResult retried = guards("B").runOnce("k", LEASE, lease -> {});
        assertThat(retried.outcome()).isEqualTo(Outcome.RAN);
        assertThat(retried.lease().token()).isGreaterThan(failed.lease().token());
        assertThat(retried.throwIfFailed()).isSameAs(retried);
        assertThat(count(
                        "SELECT COUNT(*) FROM dbtasks_once WHERE once_key = 'k' AND status = 'SUCCEEDED' AND runs = 2"))
                .isEqualTo(1);
    }

    @Test
    void successAfterAFailureKeepsTheFailuresErrorAsATrace() {
        guards("A").runOnce("traced", LEASE, lease -> {
            throw new java.io.IOException("disk full");
        });
        assertThat(guards("B").runOnce("traced", LEASE, lease -> {}).outcome()).isEqualTo(Outcome.RAN);
        assertThat(status("traced")).isEqualTo("SUCCEEDED");
        assertThat(single("SELECT last_error FROM dbtasks_once WHERE once_key = ?", "traced"))
                .as("the error of the failed run is kept after the key succeeded")
                .contains("IOException")
                .contains("disk full");
    }

    /** Writes the row a runner killed mid-run leaves: RUNNING under its target, its lease ended. */
    private void deadRunner(String key, String target) {
        Instant past = Instant.now().minus(Duration.ofMinutes(1));
        sql(
                "INSERT INTO dbtasks_once (once_key, status, token, owner, lease_expires_at, target, runs, started_at,"
                        + " created_at, updated_at) VALUES (?, 'RUNNING', 1, 'killed/scheduling-1', ?, ?, 1, ?, ?, ?)",
                key,
                past,
                target,
                past,
                past,
                past);
    }

    @Test
    void keyOfADeadRunnerIsRunAgainUnderTheSameKeyByExactlyOneOfTwoEnginesThatRegisterItsTarget() throws Exception {
        String key = "tick:2026-11-23T10:21:26Z";
        deadRunner(key, "tick");
        deadRunner("other:2026-11-23T10:21:26Z", "not-registered");
        java.util.Map<String, AtomicInteger> runs = new java.util.concurrent.ConcurrentHashMap<>();
        for (String process : new String[] {"A", "B"}) {
            engine(b -> b.workers(false)
                            .migrate(false)
                            .workerId(process)
                            .runOnceTarget(
                                    "tick",
                                    Duration.ofSeconds(2),
                                    lease -> runs.computeIfAbsent(lease.name(), k -> new AtomicInteger())
                                            .incrementAndGet()))
                    .start();
        }
        eventually().alias("the dead runner's key ran again").until(() -> runs.containsKey(key));
        Thread.sleep(1_000); // several rescue intervals of both engines
        assertThat(runs).containsOnlyKeys(key);
        assertThat(runs.get(key)).hasValue(1);
        assertThat(count(
                        "SELECT COUNT(*) FROM dbtasks_once WHERE once_key = ? AND status = 'SUCCEEDED' AND runs = 2"
                                + " AND token > 1 AND target = 'tick'",
                        key))
                .isEqualTo(1);
        assertThat(status("other:2026-11-23T10:21:26Z"))
                .as("no engine registers its target")
                .isEqualTo("RUNNING");
    }

    @Test
    void keyWithATargetIsRecordedWithItAndAKeyWithinItsLeaseIsNotRescued() throws Exception {
        AtomicInteger rescued = new AtomicInteger();
        engine(b -> b.workers(false)
                        .migrate(false)
                        .runOnceTarget("report", Duration.ofSeconds(2), lease -> rescued.incrementAndGet()))
                .start();
        RunOnceGuards a = guards("A");
        assertThat(a.runOnce("report:2026-11-22", "report", Duration.ofMillis(600), lease -> Thread.sleep(1_500))
                        .outcome())
                .as("a live runner renews its lease and is not rescued")
                .isEqualTo(Outcome.RAN);
        assertThat(single("SELECT target FROM dbtasks_once WHERE once_key = ?", "report:2026-11-22"))
                .isEqualTo("report");
        assertThat(rescued).hasValue(0);
        assertThatThrownBy(() -> a.runOnce("k", "t".repeat(201), LEASE, l -> {}))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> engine(b -> b.workers(false)
                        .migrate(false)
                        .runOnceTarget("twice", LEASE, l -> {})
                        .runOnceTarget("twice", LEASE, l -> {})))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'twice'");
    }

    @Test
    void anErrorIsRecordedAsFailedAndRethrown() {
        assertThatThrownBy(() -> guards("A").runOnce("k", LEASE, lease -> {
                    throw new StackOverflowError("deep");
                }))
                .isInstanceOf(StackOverflowError.class);
        assertThat(status("k")).isEqualTo("FAILED");
    }

    @Test
    void longWorkKeepsItsLeaseByHeartbeat() throws Exception {
        RunOnceGuards a = guards("A");
        Duration shortLease = Duration.ofMillis(600);
        CompletableFuture<RunOnceResult> slow =
                CompletableFuture.supplyAsync(() -> a.runOnce("k", shortLease, lease -> Thread.sleep(1800)));
        Thread.sleep(1200); // two leases later
        RunOnceResult other = guards("B").runOnce("k", shortLease, lease -> {});
        assertThat(other.outcome()).as("renewed, so not taken over").isEqualTo(Outcome.SKIPPED_RUNNING);
        assertThat(slow.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(Outcome.RAN);
    }

    @Test
    void workIsInterruptedWhenItsRowIsTakenOver() {
        long start = System.nanoTime();
        RunOnceResult r = guards("A").runOnce("k", Duration.ofMillis(900), lease -> {
            // Another holder takes the row (as a takeover after a stall would): our token is gone.
            sql("UPDATE dbtasks_once SET token = token + 1000000 WHERE once_key = 'k'");
            Thread.sleep(10_000);
        });
        assertThat(r.outcome()).isEqualTo(Outcome.LEASE_LOST);
        assertThat(r.error()).isInstanceOf(InterruptedException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3000);
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
        assertThat(status("k")).as("the new holder's row is untouched").isEqualTo("RUNNING");
    }

    @Test
    void retentionDeletesOnlyOldFinishedRows() {
        RunOnceGuards a = guards("A");
        for (String k : new String[] {"old-done", "old-failed", "new-done"}) {
            a.runOnce(k, LEASE, lease -> {
                if (k.endsWith("failed")) {
                    throw new IllegalStateException("x");
                }
            });
        }
        CountDownLatch started = latch();
        CountDownLatch finish = latch();
        CompletableFuture<RunOnceResult> running =
                CompletableFuture.supplyAsync(() -> a.runOnce("old-running", LEASE, l -> {
                    started.countDown();
                    awaitLatch(finish);
                }));
        try {
            awaitLatch(started);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        Instant twoHoursAgo = Instant.now().minus(Duration.ofHours(2));
        sql("UPDATE dbtasks_once SET updated_at = ? WHERE once_key LIKE 'old-%'", twoHoursAgo);

        assertThat(a.deleteOlderThan(Duration.ofHours(1))).isEqualTo(2);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_once")).isEqualTo(2);
        assertThat(status("new-done")).isEqualTo("SUCCEEDED");
        assertThat(status("old-running")).as("a live lease is kept").isEqualTo("RUNNING");
        finish.countDown();
        assertThat(running.join().outcome()).isEqualTo(Outcome.RAN);
        assertThatThrownBy(() -> a.deleteOlderThan(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void retentionWorksInBatches() {
        RunOnceGuards a = guards("A");
        for (int i = 0; i < 2500; i++) {
            sql(
                    "INSERT INTO dbtasks_once (once_key, status, token, owner, runs, started_at, finished_at, created_at,"
                            + " updated_at) VALUES (?, 'SUCCEEDED', ?, 'x', 1, ?, ?, ?, ?)",
                    "bulk-" + i,
                    (long) i,
                    Instant.now().minus(Duration.ofDays(10)),
                    Instant.now().minus(Duration.ofDays(10)),
                    Instant.now().minus(Duration.ofDays(10)),
                    Instant.now().minus(Duration.ofDays(10)));
        }
        assertThat(a.deleteOlderThan(Duration.ofDays(1))).isEqualTo(2500);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_once")).isZero();
    }

    @Test
    void keysDifferingOnlyInCaseAccentOrTrailingSpaceAreDistinct() {
        RunOnceGuards a = guards("A");
        for (String k : new String[] {"report", "Report", "rëport", "report "}) {
            assertThat(a.runOnce(k, LEASE, lease -> {}).outcome()).as(k).isEqualTo(Outcome.RAN);
        }
        assertThat(a.runOnce("report", LEASE, lease -> {}).outcome()).isEqualTo(Outcome.SKIPPED_DONE);
    }

    @Test
    void invalidArgumentsAreRejected() {
        RunOnceGuards a = guards("A");
        assertThatThrownBy(() -> a.runOnce("", LEASE, l -> {})).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.runOnce("k".repeat(256), LEASE, l -> {}))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.runOnce("k", Duration.ZERO, l -> {})).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> a.runOnce("k", LEASE, null)).isInstanceOf(NullPointerException.class);
    }
}
