package io.dbtasks.internal.completion;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.Attempt;
import io.dbtasks.AttemptOutcome;
import io.dbtasks.RetryPolicy;
import io.dbtasks.Task;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.contract.EngineHarness;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.dialect.Dialects;
import io.dbtasks.internal.enqueue.Enqueuer;
import io.dbtasks.internal.execution.HandlerRegistry;
import io.dbtasks.internal.lease.Leases;
import io.dbtasks.internal.query.TaskOperations;
import io.dbtasks.internal.query.TaskQueries;
import io.dbtasks.internal.query.TaskRows;
import io.dbtasks.internal.support.EngineConfig;
import io.dbtasks.internal.support.Events;
import io.dbtasks.internal.support.HealthTracker;
import io.dbtasks.internal.support.Jdbc;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The lease protocol at the component level, without worker threads: two engines that are never
 * started drive {@link Leases} and {@link Completions} by hand, so each step of a takeover happens
 * exactly when the test says. Run once per database by the subclasses.
 */
public abstract class LeaseFencingContract extends EngineHarness {
    static final String QUEUE = "fenced";
    /** One worker's lease and completion components, wired as an engine wires them, with no threads. */
    record Worker(
            Enqueuer enqueuer,
            TaskQueries queries,
            TaskOperations operations,
            Leases leases,
            Completions completions) {}

    /** The components of a worker {@code workerId} that is never started. */
    private Worker worker(String workerId) {
        return worker(workerId, dataSource());
    }

    /** The components of a worker {@code workerId} that is never started, on {@code ds}. */
    private Worker worker(String workerId, javax.sql.DataSource ds) {
        EngineConfig config = new EngineConfig(
                workerId,
                Map.of(QUEUE, 1),
                null,
                Duration.ofSeconds(30),
                Duration.ofSeconds(10),
                Duration.ofMillis(50),
                Duration.ofSeconds(10),
                Duration.ofSeconds(5),
                10,
                true,
                3,
                RetryPolicy.fixed(Duration.ZERO),
                null,
                List.of(),
                () -> 0.5,
                Duration.ZERO,
                Duration.ofSeconds(30),
                List.of(),
                Duration.ZERO,
                Duration.ZERO);
        JsonMapper mapper = JsonMapper.builder().build();
        Dialect dialect = Dialects.detect(dataSource());
        Jdbc jdbc = new Jdbc(ds, config.statementTimeout(), new HealthTracker());
        Events events = new Events(workerId, List.of());
        Attempts attempts = new Attempts(dialect);
        TaskQueries queries = new TaskQueries(jdbc, dialect);
        return new Worker(
                new Enqueuer(jdbc, dialect, HandlerRegistry.builder().build(mapper), config, q -> {}, events),
                queries,
                new TaskOperations(jdbc, dialect, queries, q -> {}),
                new Leases(jdbc, dialect, attempts, config, events),
                new Completions(jdbc, dialect, attempts));
    }

    private long enqueue(Worker e, int maxAttempts) {
        return e.enqueuer()
                .enqueue(List.of(TaskRequest.builder("fenced.work")
                        .queue(QUEUE)
                        .maxAttempts(maxAttempts)
                        .build()))
                .get(0)
                .task()
                .id();
    }

    private static Task claimOne(Worker e) {
        List<TaskRows.Claimed> claimed = e.leases().claim(QUEUE, 10);
        assertThat(claimed).hasSize(1);
        return claimed.get(0).task();
    }

    private static Task row(Worker e, long id) {
        return e.queries().find(id).orElseThrow();
    }

    @Test
    void staleTokenCannotHeartbeatCompleteFailCancelOrHandBackAfterTakeover() {
        Worker oldWorker = worker("old");
        Worker newWorker = worker("new");
        long id = enqueue(oldWorker, 3);
        Task old = claimOne(oldWorker);
        assertThat(old.leaseOwner()).isEqualTo("old");

        expireLease(id);
        assertThat(newWorker.leases().rescueExpired()).isEqualTo(1);
        Task rescued = row(newWorker, id);
        assertThat(rescued.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(rescued.attempt()).isEqualTo(1);
        assertThat(rescued.leaseOwner()).isNull();
        assertThat(rescued.leaseExpiresAt()).isNull();
        Task fresh = claimOne(newWorker);
        assertThat(fresh.fencingToken()).isGreaterThan(old.fencingToken());
        assertThat(fresh.attempt()).isEqualTo(2);
        assertThat(fresh.leaseOwner()).isEqualTo("new");
        Task before = row(newWorker, id);

        // Every write of the old worker is guarded by its token and matches 0 rows.
        assertThat(oldWorker.leases().heartbeat(List.of(old))).containsExactly(old.fencingToken());
        Completions stale = oldWorker.completions();
        IllegalStateException boom = new IllegalStateException("stale");
        assertThat(stale.succeed(old, 10)).isFalse();
        assertThat(stale.retry(old, AttemptOutcome.FAILED, boom, Duration.ZERO, 10))
                .isEmpty();
        assertThat(stale.fail(old, AttemptOutcome.FAILED, boom, 10)).isFalse();
        assertThat(stale.fail(old, AttemptOutcome.TIMED_OUT, boom, 10)).isFalse();
        assertThat(stale.cancelled(old, boom, 10)).isFalse();
        assertThat(stale.handBack(old)).isEmpty();

        assertThat(row(newWorker, id)).isEqualTo(before); // not even updated_at moved
        assertThat(newWorker.queries().attempts(id))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.LEASE_EXPIRED);

        // The new holder's writes land.
        assertThat(newWorker.leases().heartbeat(List.of(fresh))).isEmpty();
        assertThat(newWorker.completions().succeed(fresh, 10)).isTrue();
        Task done = row(newWorker, id);
        assertThat(done.status()).isEqualTo(TaskStatus.SUCCEEDED);
        assertThat(done.attempt()).isEqualTo(2);
        List<Attempt> attempts = newWorker.queries().attempts(id);
        assertThat(attempts)
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.LEASE_EXPIRED, AttemptOutcome.SUCCEEDED);
        assertThat(attempts)
                .extracting(Attempt::fencingToken)
                .containsExactly(old.fencingToken(), fresh.fencingToken());
        assertThat(attempts).extracting(Attempt::worker).containsExactly("old", "new");
    }

    @Test
    void batchedCompletionRecordsOnlyTheAttemptsThatStillHoldTheirLease() {
        Worker oldWorker = worker("old");
        Worker newWorker = worker("new");
        long staleId = enqueue(oldWorker, 3);
        Task stale = claimOne(oldWorker);
        long liveId = enqueue(oldWorker, 3);
        Task live = claimOne(oldWorker);
        long takenId = enqueue(oldWorker, 3);
        Task taken = claimOne(oldWorker);

        // One lease is rescued and re-claimed elsewhere; another is rescued and still PENDING.
        expireLease(staleId);
        expireLease(takenId);
        assertThat(newWorker.leases().rescueExpired()).isEqualTo(2);
        List<TaskRows.Claimed> reclaimed = newWorker.leases().claim(QUEUE, 1);
        assertThat(reclaimed).hasSize(1);
        Task fresh = reclaimed.get(0).task();
        Task pendingBefore = row(newWorker, fresh.id() == staleId ? takenId : staleId);

        Set<Long> recorded = oldWorker
                .completions()
                .succeedAll(List.of(
                        new Completions.Success(stale, 5),
                        new Completions.Success(live, 6),
                        new Completions.Success(taken, 7)));

        assertThat(recorded).containsExactly(live.fencingToken());
        assertThat(row(oldWorker, liveId).status()).isEqualTo(TaskStatus.SUCCEEDED);
        assertThat(oldWorker.queries().attempts(liveId))
                .extracting(Attempt::outcome, Attempt::fencingToken, Attempt::worker)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(AttemptOutcome.SUCCEEDED, live.fencingToken(), "old"));
        assertThat(row(newWorker, fresh.id()).status()).isEqualTo(TaskStatus.RUNNING);
        assertThat(row(newWorker, fresh.id()).fencingToken()).isEqualTo(fresh.fencingToken());
        assertThat(row(newWorker, pendingBefore.id())).isEqualTo(pendingBefore);
        for (long id : List.of(staleId, takenId)) {
            assertThat(newWorker.queries().attempts(id))
                    .extracting(Attempt::outcome)
                    .containsExactly(AttemptOutcome.LEASE_EXPIRED);
        }
    }

    @Test
    void batchedFailuresRecordOnlyTheAttemptsThatStillHoldTheirLease() {
        Worker oldWorker = worker("old");
        Worker newWorker = worker("new");
        long staleId = enqueue(oldWorker, 3);
        Task stale = claimOne(oldWorker);
        long retriedId = enqueue(oldWorker, 3);
        Task retried = claimOne(oldWorker);
        long failedId = enqueue(oldWorker, 3);
        Task failed = claimOne(oldWorker);
        long cancelledId = enqueue(oldWorker, 3);
        Task cancelled = claimOne(oldWorker);
        expireLease(staleId);
        assertThat(newWorker.leases().rescueExpired()).isEqualTo(1);
        Task staleNow = row(newWorker, staleId);
        newWorker.operations().cancel(cancelledId);

        Map<Long, TaskStatus> written = oldWorker
                .completions()
                .settleFailures(List.of(
                        new Completions.Failure(
                                stale, AttemptOutcome.FAILED, new IllegalStateException("late"), Duration.ZERO, 1),
                        new Completions.Failure(
                                retried,
                                AttemptOutcome.FAILED,
                                new IllegalStateException("again"),
                                Duration.ofHours(1),
                                2),
                        new Completions.Failure(
                                failed, AttemptOutcome.TIMED_OUT, new IllegalStateException("slow"), null, 3),
                        new Completions.Failure(
                                cancelled,
                                AttemptOutcome.FAILED,
                                new IllegalStateException("cancelled meanwhile"),
                                Duration.ZERO,
                                4)));

        assertThat(written)
                .containsOnly(
                        Map.entry(retried.fencingToken(), TaskStatus.PENDING),
                        Map.entry(failed.fencingToken(), TaskStatus.FAILED),
                        Map.entry(cancelled.fencingToken(), TaskStatus.CANCELLED));
        assertThat(row(newWorker, staleId)).isEqualTo(staleNow);
        assertThat(row(oldWorker, retriedId).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(row(oldWorker, retriedId).lastError()).contains("again");
        assertThat(row(oldWorker, failedId).status()).isEqualTo(TaskStatus.FAILED);
        assertThat(row(oldWorker, cancelledId).status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(oldWorker.queries().attempts(retriedId))
                .extracting(Attempt::outcome, Attempt::fencingToken)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(AttemptOutcome.FAILED, retried.fencingToken()));
        assertThat(oldWorker.queries().attempts(failedId))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.TIMED_OUT);
        assertThat(newWorker.queries().attempts(staleId))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.LEASE_EXPIRED);
    }

    /**
     * A batch of retries and failures beside a success: each retry gets its own backoff and error,
     * each FAILED its own error, and an attempt whose lease was lost (here a FAILED and a retry among
     * several) is left out. On MariaDB the retries and the FAILED each go as one locking read and
     * one UPDATE, not one statement per task.
     */
    @Test
    void mixedBatchKeepsEachAttemptsOwnBackoffAndError() {
        Worker oldWorker = worker("old");
        Worker newWorker = worker("new");
        long[] ids = new long[7];
        Task[] claimed = new Task[7];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = enqueue(oldWorker, 3);
            claimed[i] = claimOne(oldWorker);
        }
        // 0: success; 1, 2: retries in 1 h and 2 h; 3: retry whose lease was lost; 4, 5: FAILED;
        // 6: FAILED whose lease was lost.
        expireLease(ids[3]);
        expireLease(ids[6]);
        assertThat(newWorker.leases().rescueExpired()).isEqualTo(2);
        Task lostRetry = row(newWorker, ids[3]);
        Task lostFailure = row(newWorker, ids[6]);
        Instant before = Instant.now();

        Set<Long> succeeded = oldWorker.completions().succeedAll(List.of(new Completions.Success(claimed[0], 1)));
        Map<Long, TaskStatus> failed = oldWorker
                .completions()
                .settleFailures(List.of(
                        new Completions.Failure(
                                claimed[1],
                                AttemptOutcome.FAILED,
                                new IllegalStateException("first"),
                                Duration.ofHours(1),
                                1),
                        new Completions.Failure(
                                claimed[2],
                                AttemptOutcome.FAILED,
                                new IllegalStateException("second"),
                                Duration.ofHours(2),
                                1),
                        new Completions.Failure(
                                claimed[3], AttemptOutcome.FAILED, new IllegalStateException("late"), Duration.ZERO, 1),
                        new Completions.Failure(
                                claimed[4], AttemptOutcome.FAILED, new IllegalStateException("fourth"), null, 1),
                        new Completions.Failure(
                                claimed[5], AttemptOutcome.TIMED_OUT, new IllegalStateException("fifth"), null, 1),
                        new Completions.Failure(
                                claimed[6], AttemptOutcome.FAILED, new IllegalStateException("lost"), null, 1)));

        assertThat(succeeded).containsExactly(claimed[0].fencingToken());
        assertThat(failed)
                .containsOnly(
                        Map.entry(claimed[1].fencingToken(), TaskStatus.PENDING),
                        Map.entry(claimed[2].fencingToken(), TaskStatus.PENDING),
                        Map.entry(claimed[4].fencingToken(), TaskStatus.FAILED),
                        Map.entry(claimed[5].fencingToken(), TaskStatus.FAILED));
        assertThat(row(oldWorker, ids[0]).status()).isEqualTo(TaskStatus.SUCCEEDED);
        Task first = row(oldWorker, ids[1]);
        Task second = row(oldWorker, ids[2]);
        assertThat(first.lastError()).contains("first").doesNotContain("second");
        assertThat(second.lastError()).contains("second");
        assertThat(first.runAt()).isBetween(before.plus(Duration.ofMinutes(59)), before.plus(Duration.ofMinutes(61)));
        assertThat(Duration.between(first.runAt(), second.runAt()))
                .isBetween(Duration.ofMinutes(59), Duration.ofMinutes(61));
        assertThat(row(oldWorker, ids[4]).lastError()).contains("fourth");
        assertThat(row(oldWorker, ids[5]).lastError()).contains("fifth");
        assertThat(row(oldWorker, ids[4]).status()).isEqualTo(TaskStatus.FAILED);
        assertThat(row(newWorker, ids[3])).isEqualTo(lostRetry);
        assertThat(row(newWorker, ids[6])).isEqualTo(lostFailure);
        for (int i : new int[] {0, 1, 2, 4, 5}) {
            assertThat(oldWorker.queries().attempts(ids[i])).hasSize(1);
        }
        for (int i : new int[] {3, 6}) {
            assertThat(newWorker.queries().attempts(ids[i]))
                    .extracting(Attempt::outcome)
                    .containsExactly(AttemptOutcome.LEASE_EXPIRED);
        }
    }

    /**
     * Retries written together keep each its own stack trace, though the statement sends each
     * distinct trace once (PostgreSQL): two failures from one throw site share theirs, a third has
     * another.
     */
    @Test
    void batchedRetriesKeepEachAttemptsOwnStackTrace() {
        Worker w = worker("w");
        long[] ids = new long[3];
        Task[] claimed = new Task[3];
        for (int i = 0; i < 3; i++) {
            ids[i] = enqueue(w, 3);
            claimed[i] = claimOne(w);
        }
        IllegalStateException shared = new IllegalStateException("dependency down");
        IllegalArgumentException own = new IllegalArgumentException("bad input");
        Map<Long, TaskStatus> written = w.completions()
                .settleFailures(List.of(
                        new Completions.Failure(claimed[0], AttemptOutcome.FAILED, shared, Duration.ofHours(1), 1),
                        new Completions.Failure(claimed[1], AttemptOutcome.FAILED, own, Duration.ofHours(1), 1),
                        new Completions.Failure(claimed[2], AttemptOutcome.FAILED, shared, Duration.ofHours(1), 1)));

        assertThat(written).hasSize(3).containsValue(TaskStatus.PENDING).doesNotContainValue(TaskStatus.FAILED);
        String[] traces = new String[3];
        for (int i = 0; i < 3; i++) {
            List<Attempt> attempts = w.queries().attempts(ids[i]);
            assertThat(attempts).hasSize(1);
            traces[i] = attempts.get(0).stackTrace();
            assertThat(traces[i]).isEqualTo(Attempts.stackTrace(i == 1 ? own : shared));
        }
        assertThat(traces[0]).startsWith("java.lang.IllegalStateException: dependency down");
        assertThat(traces[1]).startsWith("java.lang.IllegalArgumentException: bad input");
    }

    /**
     * In one batch of retries, those whose task an operator asked to cancel while the attempt ran
     * end CANCELLED and the others go back to PENDING, each with its attempt row, and a retry whose
     * lease was lost writes nothing.
     */
    @Test
    void batchedRetriesOfTasksWithACancelRequestEndCancelledAndTheOthersRetry() {
        Worker w = worker("w");
        long[] ids = new long[4];
        Task[] claimed = new Task[4];
        for (int i = 0; i < 4; i++) {
            ids[i] = enqueue(w, 3);
            claimed[i] = claimOne(w);
        }
        w.operations().cancel(ids[1]); // RUNNING: only flagged
        w.operations().cancel(ids[2]);
        sql("UPDATE dbtasks_task SET lease_token = lease_token + 1000000 WHERE id = ?", ids[3]); // taken over
        RuntimeException error = new IllegalStateException("gateway busy");
        List<Completions.Failure> batch = new java.util.ArrayList<>();
        for (Task t : claimed) {
            batch.add(new Completions.Failure(t, AttemptOutcome.FAILED, error, Duration.ofHours(1), 1));
        }

        Map<Long, TaskStatus> written = w.completions().settleFailures(batch);

        assertThat(written)
                .containsOnly(
                        Map.entry(claimed[0].fencingToken(), TaskStatus.PENDING),
                        Map.entry(claimed[1].fencingToken(), TaskStatus.CANCELLED),
                        Map.entry(claimed[2].fencingToken(), TaskStatus.CANCELLED));
        assertThat(row(w, ids[0]).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(row(w, ids[0]).lastError()).isEqualTo("java.lang.IllegalStateException: gateway busy");
        for (int i : new int[] {1, 2}) {
            Task cancelled = row(w, ids[i]);
            assertThat(cancelled.status()).isEqualTo(TaskStatus.CANCELLED);
            assertThat(cancelled.cancelRequested()).isFalse();
            assertThat(cancelled.finishedAt()).isNotNull();
            assertThat(cancelled.lastError())
                    .isEqualTo("Cancelled by an operator; the attempt failed with"
                            + " java.lang.IllegalStateException: gateway busy");
        }
        for (int i = 0; i < 3; i++) {
            assertThat(w.queries().attempts(ids[i]))
                    .extracting(Attempt::outcome)
                    .containsExactly(AttemptOutcome.FAILED);
        }
        assertThat(row(w, ids[3]).status()).isEqualTo(TaskStatus.RUNNING);
        assertThat(w.queries().attempts(ids[3])).isEmpty();
    }

    /**
     * A batch may hold two attempts of one task: one whose lease expired and was rescued, and the
     * attempt of the claim after it. Whatever their order, the current one is recorded.
     */
    @Test
    void batchWithAStaleAndACurrentAttemptOfOneTaskRecordsTheCurrentOne() {
        Worker w = worker("w");
        long succeeding = enqueue(w, 3);
        Task staleSuccess = claimOne(w);
        long failing = enqueue(w, 3);
        Task staleFailure = claimOne(w);
        expireLease(succeeding);
        expireLease(failing);
        assertThat(w.leases().rescueExpired()).isEqualTo(2);
        List<TaskRows.Claimed> again = w.leases().claim(QUEUE, 10);
        assertThat(again).hasSize(2);
        Task freshSuccess = again.stream()
                .map(TaskRows.Claimed::task)
                .filter(t -> t.id() == succeeding)
                .findFirst()
                .orElseThrow();
        Task freshFailure = again.stream()
                .map(TaskRows.Claimed::task)
                .filter(t -> t.id() == failing)
                .findFirst()
                .orElseThrow();

        Set<Long> recorded = w.completions()
                .succeedAll(
                        List.of(new Completions.Success(staleSuccess, 1), new Completions.Success(freshSuccess, 1)));
        RuntimeException boom = new IllegalStateException("boom");
        Map<Long, TaskStatus> written = w.completions()
                .settleFailures(List.of(
                        new Completions.Failure(staleFailure, AttemptOutcome.FAILED, boom, Duration.ofHours(1), 1),
                        new Completions.Failure(freshFailure, AttemptOutcome.FAILED, boom, Duration.ofHours(1), 1)));

        assertThat(recorded).containsExactly(freshSuccess.fencingToken());
        assertThat(row(w, succeeding).status()).isEqualTo(TaskStatus.SUCCEEDED);
        assertThat(w.queries().attempts(succeeding))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.LEASE_EXPIRED, AttemptOutcome.SUCCEEDED);
        assertThat(written).containsOnly(Map.entry(freshFailure.fencingToken(), TaskStatus.PENDING));
        assertThat(row(w, failing).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(w.queries().attempts(failing))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.LEASE_EXPIRED, AttemptOutcome.FAILED);
    }

    @Test
    void settledAttemptCannotBeSettledTwice() {
        Worker w = worker("w");
        long id = enqueue(w, 3);
        Task t = claimOne(w);
        assertThat(w.completions().succeed(t, 1)).isTrue();
        Task done = row(w, id);

        assertThat(w.completions().succeed(t, 1)).isFalse();
        assertThat(w.completions().retry(t, AttemptOutcome.FAILED, new RuntimeException(), Duration.ZERO, 1))
                .isEmpty();
        assertThat(w.completions().handBack(t)).isEmpty();
        assertThat(w.leases().heartbeat(List.of(t))).containsExactly(t.fencingToken());

        assertThat(row(w, id)).isEqualTo(done);
        assertThat(w.queries().attempts(id)).hasSize(1);
    }

    @Test
    void successSubmittedAfterTheWriterStoppedIsStillRecorded() throws Exception {
        Worker w = worker("w");
        long id = enqueue(w, 1);
        Task t = claimOne(w);
        OutcomeBatcher writer = new OutcomeBatcher(w.completions());
        writer.start();
        writer.stop(1_000); // as at engine stop: a handler that outlived it returns after this

        CompletableFuture<Boolean> recorded = new CompletableFuture<>();
        writer.submit(new Completions.Success(t, 3), recorded::complete);

        assertThat(recorded.get(10, TimeUnit.SECONDS)).isTrue();
        Task done = row(w, id);
        assertThat(done.status()).isEqualTo(TaskStatus.SUCCEEDED);
        assertThat(done.attempt()).isEqualTo(1);
        assertThat(w.queries().attempts(id))
                .singleElement()
                .satisfies(a -> assertThat(a.outcome()).isEqualTo(AttemptOutcome.SUCCEEDED));
    }

    @Test
    void retriedTaskCannotBeCompletedWithTheTokenOfTheFailedAttempt() {
        Worker w = worker("w");
        long id = enqueue(w, 3);
        Task first = claimOne(w);
        assertThat(w.completions().retry(first, AttemptOutcome.FAILED, new RuntimeException("x"), Duration.ZERO, 1))
                .contains(TaskStatus.PENDING);
        Task second = claimOne(w);

        assertThat(w.completions().succeed(first, 1)).isFalse();
        assertThat(row(w, id).status()).isEqualTo(TaskStatus.RUNNING);
        assertThat(row(w, id).fencingToken()).isEqualTo(second.fencingToken());
        assertThat(w.completions().succeed(second, 1)).isTrue();
    }

    @Test
    void rescueLeavesLiveLeasesAloneAndAHolderMayRenewALeaseNobodyTookOver() {
        Worker holder = worker("holder");
        Worker rescuer = worker("rescuer");
        long id = enqueue(holder, 3);
        Task t = claimOne(holder);

        assertThat(rescuer.leases().rescueExpired()).isZero();
        // Expired but not yet rescued: the holder's heartbeat still matches its token and renews it,
        // after which the rescuer's re-check of expiry finds nothing to do.
        expireLease(id);
        assertThat(holder.leases().heartbeat(List.of(t))).isEmpty();
        assertThat(row(holder, id).leaseExpiresAt()).isAfter(java.time.Instant.now());
        assertThat(rescuer.leases().rescueExpired()).isZero();
        assertThat(row(holder, id).status()).isEqualTo(TaskStatus.RUNNING);
        assertThat(holder.queries().attempts(id)).isEmpty();
    }

    @Test
    void handBackReturnsTheAttemptAndWritesNoAttemptRow() {
        Worker w = worker("w");
        long id = enqueue(w, 1);
        Task t = claimOne(w);
        assertThat(t.attempt()).isEqualTo(1);

        assertThat(w.completions().handBack(t)).contains(TaskStatus.PENDING);

        Task back = row(w, id);
        assertThat(back.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(back.attempt()).isZero();
        assertThat(back.leaseExpiresAt()).isNull();
        assertThat(w.queries().attempts(id)).isEmpty();
        Task again = claimOne(w);
        assertThat(again.attempt()).isEqualTo(1);
        assertThat(again.fencingToken()).isGreaterThan(t.fencingToken());
    }

    @Test
    void handBackOfATaskAnOperatorAskedToCancelEndsItCancelled() {
        Worker w = worker("w");
        long id = enqueue(w, 3);
        Task t = claimOne(w);
        w.operations().cancel(id); // RUNNING: only flagged, for the worker's next heartbeat

        assertThat(w.completions().handBack(t)).contains(TaskStatus.CANCELLED);

        Task back = row(w, id);
        assertThat(back.status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(back.attempt()).isZero();
        assertThat(back.leaseOwner()).isNull();
        assertThat(back.finishedAt()).isNotNull();
        assertThat(w.queries().attempts(id)).isEmpty();
        assertThat(w.leases().claim(QUEUE, 1)).isEmpty();
    }

    @Test
    void twoRescuersRacingOverTheSameExpiredLeasesRescueEachOnce() throws Exception {
        Worker holder = worker("holder");
        Worker a = worker("rescuer-a");
        Worker b = worker("rescuer-b");
        int n = 30;
        for (int i = 0; i < n; i++) {
            enqueue(holder, 3);
        }
        assertThat(holder.leases().claim(QUEUE, n)).hasSize(n);
        assertThat(sql(
                        "UPDATE dbtasks_task SET lease_expires_at = ?",
                        java.time.Instant.now().minusSeconds(60)))
                .isEqualTo(n);

        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            CyclicBarrier go = new CyclicBarrier(2);
            Future<Integer> fa = pool.submit(() -> {
                go.await(10, TimeUnit.SECONDS);
                return a.leases().rescueExpired();
            });
            Future<Integer> fb = pool.submit(() -> {
                go.await(10, TimeUnit.SECONDS);
                return b.leases().rescueExpired();
            });
            assertThat(fa.get(30, TimeUnit.SECONDS) + fb.get(30, TimeUnit.SECONDS))
                    .isEqualTo(n);
        } finally {
            pool.shutdownNow();
        }
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE outcome = 'LEASE_EXPIRED'"))
                .isEqualTo(n);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'PENDING'"))
                .isEqualTo(n);
    }

    @Test
    void claimsNeverShareATaskAndTokensStrictlyIncrease() throws Exception {
        Worker a = worker("a");
        Worker b = worker("b");
        int n = 200;
        List<TaskRequest> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(TaskRequest.builder("fenced.work").queue(QUEUE).build());
        }
        a.enqueuer().enqueue(batch);

        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<Task> claimed;
        try {
            CyclicBarrier go = new CyclicBarrier(2);
            List<Future<List<Task>>> futures = new ArrayList<>();
            for (Worker e : List.of(a, b)) {
                futures.add(pool.submit(() -> {
                    go.await(10, TimeUnit.SECONDS);
                    List<Task> mine = new ArrayList<>();
                    long lastToken = 0;
                    while (true) {
                        List<TaskRows.Claimed> got = e.leases().claim(QUEUE, 7);
                        if (got.isEmpty()) {
                            return mine;
                        }
                        for (TaskRows.Claimed c : got) {
                            assertThat(c.task().fencingToken()).isGreaterThan(lastToken);
                            mine.add(c.task());
                        }
                        lastToken = got.stream()
                                .mapToLong(c -> c.task().fencingToken())
                                .max()
                                .orElseThrow();
                    }
                }));
            }
            claimed = new ArrayList<>();
            for (Future<List<Task>> f : futures) {
                claimed.addAll(f.get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(claimed).hasSize(n);
        assertThat(claimed).extracting(Task::id).doesNotHaveDuplicates();
        assertThat(claimed).extracting(Task::fencingToken).doesNotHaveDuplicates();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'RUNNING' AND attempt = 1"))
                .isEqualTo(n);
    }

    /**
     * A claim the database rolled back as a deadlock victim or certification failure (SQLState class
     * 40: MariaDB Galera reports a write set that lost certification as 1213 / 40001) runs again in
     * the same call, as settling does: nothing of it was committed, and a claim loop that waited for
     * its next round instead would idle on every conflict between nodes claiming the same rows.
     */
    @Test
    void aClaimRolledBackAsADeadlockVictimRunsAgainAndClaimsOnce() {
        java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
        javax.sql.DataSource failingOnce = (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {javax.sql.DataSource.class}, (p, m, args) -> {
                    Object r = invoke(dataSource(), m, args);
                    if (!m.getName().equals("getConnection")) {
                        return r;
                    }
                    java.sql.Connection real = (java.sql.Connection) r;
                    return java.lang.reflect.Proxy.newProxyInstance(
                            getClass().getClassLoader(),
                            new Class<?>[] {java.sql.Connection.class},
                            (cp, cm, cargs) -> {
                                if ((cm.getName().equals("prepareStatement")
                                                || cm.getName().equals("createStatement"))
                                        && armed.getAndSet(false)) {
                                    throw new java.sql.SQLTransactionRollbackException(
                                            "Deadlock found when trying to get lock; try restarting transaction",
                                            "40001",
                                            1213);
                                }
                                return invoke(real, cm, cargs);
                            });
                });
        Worker w = worker("victim", failingOnce);
        long id = enqueue(w, 3);
        armed.set(true);
        List<TaskRows.Claimed> claimed = w.leases().claim(QUEUE, 10);
        assertThat(armed).as("the claim met the injected rollback").isFalse();
        assertThat(claimed).extracting(c -> c.task().id()).containsExactly(id);
        assertThat(row(w, id).status()).isEqualTo(TaskStatus.RUNNING);
        assertThat(w.leases().claim(QUEUE, 10)).isEmpty();
    }

    private static Object invoke(Object target, java.lang.reflect.Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
