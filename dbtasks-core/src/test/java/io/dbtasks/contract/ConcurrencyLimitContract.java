package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.Task;
import io.dbtasks.TaskOptions;
import io.dbtasks.TaskQuery;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.TaskSummary;
import io.dbtasks.limit.KeyLoad;
import io.dbtasks.limit.Limit;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Concurrency keys and limits: the key is stored and searchable, limits are rows changed at run
 * time, and the claim never lets more of a key run than its limit allows, across engines, when a
 * limit changes, and when a holder's lease expires. Run once per database by the subclasses.
 */
public abstract class ConcurrencyLimitContract extends EngineHarness {
    static final String KIND = "limit.work";
    static final String QUEUE = "limited";

    @Test
    void theConcurrencyKeyIsStoredShownAndSearchable() {
        DbTasks tasks = producer();
        long a = tasks.enqueue(TaskRequest.builder(KIND)
                        .queue(QUEUE)
                        .concurrencyKey("tenant-a")
                        .build())
                .task()
                .id();
        long b = tasks.enqueue(TaskRequest.builder(KIND)
                        .options(TaskOptions.builder()
                                .queue(QUEUE)
                                .concurrencyKey("tenant-b")
                                .build())
                        .build())
                .task()
                .id();
        List<TaskRequest> many = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            many.add(TaskRequest.builder(KIND)
                    .queue(QUEUE)
                    .concurrencyKey("tenant-a")
                    .build());
        }
        many.add(TaskRequest.builder(KIND).queue(QUEUE).build());
        tasks.enqueueAll(many);

        assertThat(tasks.find(a).orElseThrow().concurrencyKey()).isEqualTo("tenant-a");
        assertThat(tasks.find(b).orElseThrow().concurrencyKey()).isEqualTo("tenant-b");
        assertThat(tasks.count(TaskQuery.builder().concurrencyKey("tenant-a").build()))
                .isEqualTo(4);
        List<TaskSummary> bs = tasks.searchSummaries(
                        TaskQuery.builder().concurrencyKey("tenant-b").build(), 10)
                .items();
        assertThat(bs).extracting(TaskSummary::id).containsExactly(b);
        assertThat(bs.get(0).concurrencyKey()).isEqualTo("tenant-b");
        assertThat(tasks.count(TaskQuery.builder().concurrencyKey("TENANT-A").build()))
                .as("keys compare exactly")
                .isZero();

        assertThatThrownBy(() -> TaskRequest.builder(KIND)
                        .concurrencyKey("k".repeat(TaskRequest.MAX_KEY_LENGTH + 1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("concurrencyKey must be 1 to " + TaskRequest.MAX_KEY_LENGTH);
        assertThatThrownBy(() -> TaskOptions.builder().concurrencyKey(" ").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("concurrencyKey");
        assertThatThrownBy(() ->
                        TaskRequest.builder(KIND).concurrencyKey("tenant*1").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("concurrencyKey must not contain '*'");
    }

    @Test
    void limitsAreRowsSetReplacedListedAndRemovedAndTheMostSpecificApplies() {
        DbTasks tasks = producer();
        tasks.limits().set(Limit.maxRunning(QUEUE, Limit.EVERY_KEY, 3));
        tasks.limits().set(Limit.maxRunning(QUEUE, "tenant-*", 2));
        tasks.limits().set(Limit.fifo(QUEUE, "tenant-vip"));
        tasks.limits().set(Limit.maxRunning(QUEUE, "tenant-*", 5)); // replaces

        assertThat(tasks.limits().list())
                .containsExactly(
                        Limit.maxRunning(QUEUE, "*", 3),
                        Limit.maxRunning(QUEUE, "tenant-*", 5),
                        Limit.fifo(QUEUE, "tenant-vip"));
        assertThat(tasks.limits().limitFor(QUEUE, "tenant-vip").orElseThrow().fifo())
                .isTrue();
        assertThat(tasks.limits().limitFor(QUEUE, "tenant-x").orElseThrow().maxRunning())
                .isEqualTo(5);
        assertThat(tasks.limits().limitFor(QUEUE, "other").orElseThrow().maxRunning())
                .isEqualTo(3);
        assertThat(tasks.limits().limitFor("another-queue", "tenant-x")).isEmpty();
        // Patterns as specific as each other: the first in String order wins, whatever the database's
        // collation orders the rows by.
        tasks.limits().set(Limit.maxRunning(QUEUE, "*-b", 7));
        tasks.limits().set(Limit.maxRunning(QUEUE, "a-*", 8));
        assertThat(tasks.limits().limitFor(QUEUE, "a-b").orElseThrow().maxRunning())
                .isEqualTo(7);
        tasks.limits().remove(QUEUE, "*-b");
        tasks.limits().remove(QUEUE, "a-*");

        assertThat(tasks.limits().remove(QUEUE, "tenant-*")).isTrue();
        assertThat(tasks.limits().remove(QUEUE, "tenant-*")).isFalse();
        assertThat(tasks.limits().limitFor(QUEUE, "tenant-x").orElseThrow().maxRunning())
                .isEqualTo(3);
        assertThatThrownBy(() -> Limit.maxRunning(QUEUE, "*", 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxRunning must be at least 1");
    }

    /**
     * The tasks are enqueued key by key, so a claim without limits would take many tasks of one key
     * at once, and five keys outlast the others, so the limit binds: the check can fail.
     */
    @Test
    void noInstantHasMoreThanTheLimitOfAKeyRunningAcrossThreeEngines() throws Exception {
        int keys = 50;
        int perKey = 40; // on average: 5 keys have 58 tasks, the others 38
        int limit = 3;
        createRunTable();
        DbTasks producer = producer();
        producer.limits().set(Limit.maxRunning(QUEUE, Limit.EVERY_KEY, limit));
        List<TaskRequest> requests = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            // Claims are fair across keys, so the limit binds once only the 5 large keys have tasks
            // left: 15 slots for 24 workers.
            for (int i = 0; i < (k < 5 ? 58 : 38); i++) {
                requests.add(TaskRequest.builder(KIND)
                        .queue(QUEUE)
                        .concurrencyKey("key-" + k)
                        .build());
            }
        }
        producer.enqueueAll(requests);
        List<DbTasks> three = new ArrayList<>();
        for (int e = 0; e < 3; e++) {
            String worker = "limits-" + e;
            three.add(engine(b -> b.workerId(worker)
                    .queue(QUEUE, 8)
                    .claimBatch(8)
                    .handler(KIND, Void.class, (ctx, p) -> recordRun(ctx.taskId(), ctx.fencingToken(), 2))));
        }
        three.forEach(DbTasks::start);
        eventually()
                .atMost(Duration.ofSeconds(120))
                .alias("all " + keys * perKey + " tasks SUCCEEDED")
                .until(() -> producer.stats().tasks().get(TaskStatus.SUCCEEDED) == keys * perKey);

        Map<String, List<Instant[]>> handlerRuns = runs("SELECT t.concurrency_key, r.started_at, r.ended_at"
                + " FROM limit_run r JOIN dbtasks_task t ON t.id = r.task_id");
        Map<String, List<Instant[]>> running = runs("SELECT t.concurrency_key, a.started_at, a.finished_at"
                + " FROM dbtasks_attempt a JOIN dbtasks_task t ON t.id = a.task_id");
        assertThat(handlerRuns.values().stream().mapToInt(List::size).sum()).isEqualTo(keys * perKey);
        int most = 0;
        for (String key : handlerRuns.keySet()) {
            int handlers = mostOverlapping(handlerRuns.get(key));
            assertThat(handlers).as("handlers of " + key + " at once").isLessThanOrEqualTo(limit);
            if (statementClock()) {
                assertThat(mostOverlapping(running.get(key)))
                        .as("RUNNING tasks of " + key + " at once")
                        .isLessThanOrEqualTo(limit);
            }
            most = Math.max(most, handlers);
        }
        assertThat(most).as("the limit is used, not only kept").isEqualTo(limit);
        if (database() != TestDatabase.POSTGRESQL) { // PostgreSQL's claims take advisory locks, no rows
            assertThat(count("SELECT COUNT(*) FROM dbtasks_concurrency_key WHERE queue = ?", QUEUE))
                    .as("the claims created a row to lock for each key")
                    .isEqualTo(keys);
        }
    }

    @Test
    void aLimitChangedAtRunTimeHoldsOnEveryEngineWithinASecond() {
        DbTasks producer = producer();
        producer.limits().set(Limit.maxRunning(QUEUE, "hot", 1));
        List<TaskRequest> requests = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            requests.add(
                    TaskRequest.builder(KIND).queue(QUEUE).concurrencyKey("hot").build());
        }
        producer.enqueueAll(requests);
        AtomicInteger now = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicLong changedAt = new AtomicLong(Long.MAX_VALUE);
        Map<String, AtomicInteger> startsByEngine = new java.util.concurrent.ConcurrentHashMap<>();
        for (int e = 0; e < 3; e++) {
            String worker = "change-" + e;
            engine(b -> b.workerId(worker).queue(QUEUE, 2).claimBatch(2).handler(KIND, Void.class, (ctx, p) -> {
                        int n = now.incrementAndGet();
                        if (System.nanoTime() > changedAt.get()) {
                            most.accumulateAndGet(n, Math::max);
                            startsByEngine
                                    .computeIfAbsent(worker, w -> new AtomicInteger())
                                    .incrementAndGet();
                        }
                        try {
                            Thread.sleep(25);
                        } finally {
                            now.decrementAndGet();
                        }
                    }))
                    .start();
        }
        // Not measured: the three engines are running (start returns once they are) and have run a
        // few dozen tasks of the key, so the clocks below time the limit's refresh and the claims,
        // not engine start-up or a cold JVM.
        assertThat(engines.stream().filter(e -> e != producer)).hasSize(3).allMatch(DbTasks::isRunning);
        eventually()
                .atMost(Duration.ofSeconds(60))
                .alias("the engines warmed up on the key")
                .until(() -> producer.stats().tasks().getOrDefault(TaskStatus.SUCCEEDED, 0L) >= 30);

        // Raised: every engine takes part within a second; all six slots run tasks of the key.
        producer.limits().set(Limit.maxRunning(QUEUE, "hot", 6));
        long raised = System.nanoTime();
        changedAt.set(raised + Duration.ofSeconds(1).toNanos());
        eventually()
                .atMost(Duration.ofSeconds(10))
                .alias("five of the key running at once, on all three engines")
                .until(() -> most.get() >= 5 && startsByEngine.size() == 3);

        // Lowered: a second later no more than two run at once, on all engines together.
        producer.limits().set(Limit.maxRunning(QUEUE, "hot", 2));
        most.set(0);
        startsByEngine.clear();
        changedAt.set(System.nanoTime() + Duration.ofSeconds(1).toNanos());
        eventually()
                .alias("40 tasks started since the change held")
                .until(() -> startsByEngine.values().stream()
                                .mapToInt(AtomicInteger::get)
                                .sum()
                        >= 40);
        assertThat(most.get()).isBetween(1, 2);
    }

    /**
     * A holder paused past its lease keeps its place until the rescue; then another task of the key
     * may start, and the paused holder's late writes are refused by its fencing token.
     */
    @Test
    void aMutexKeyNeverOverlapsInEffectsWhenAHolderPausesPastItsLease() throws Exception {
        createEffectTable();
        DbTasks producer = producer();
        producer.limits().set(Limit.maxRunning(QUEUE, "mutex", 1));
        int n = 12;
        List<TaskRequest> requests = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            requests.add(TaskRequest.builder(KIND)
                    .queue(QUEUE)
                    .concurrencyKey("mutex")
                    .build());
        }
        List<Long> ids =
                producer.enqueueAll(requests).stream().map(r -> r.task().id()).toList();
        CountDownLatch paused = latch();
        CountDownLatch resume = latch();
        AtomicBoolean first = new AtomicBoolean(true);
        AtomicLong pausedTask = new AtomicLong();
        AtomicLong pausedToken = new AtomicLong();
        AtomicInteger now = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        for (int e = 0; e < 3; e++) {
            String worker = "mutex-" + e;
            engine(b -> b.workerId(worker)
                            .queue(QUEUE, 2)
                            .claimBatch(2)
                            .lease(Duration.ofSeconds(2))
                            .heartbeatInterval(Duration.ofMillis(1900))
                            .transactionalHandler(KIND, Void.class, (ctx, tx, p) -> {
                                boolean zombie = first.compareAndSet(true, false);
                                if (zombie) {
                                    pausedTask.set(ctx.taskId());
                                    pausedToken.set(ctx.fencingToken());
                                    paused.countDown();
                                    // Frozen, deaf to the interrupt of a lost lease, like a stopped
                                    // process; it wakes up and writes its effect all the same.
                                    while (resume.getCount() > 0) {
                                        try {
                                            resume.await();
                                        } catch (InterruptedException ignored) {
                                            // keep waiting
                                        }
                                    }
                                } else {
                                    most.accumulateAndGet(now.incrementAndGet(), Math::max);
                                }
                                try (PreparedStatement ps = tx.prepareStatement(
                                        "INSERT INTO limit_effect (task_id, token) VALUES (?, ?)")) {
                                    ps.setLong(1, ctx.taskId());
                                    ps.setLong(2, ctx.fencingToken());
                                    ps.executeUpdate();
                                    if (!zombie) {
                                        Thread.sleep(20);
                                    }
                                } finally {
                                    if (!zombie) {
                                        now.decrementAndGet();
                                    }
                                }
                            }))
                    .start();
        }
        awaitLatch(paused);
        // While the paused holder's lease is live, nothing else of the key starts.
        assertStaysIn(producer, ids.get(ids.size() - 1), TaskStatus.PENDING, Duration.ofMillis(500));
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'RUNNING'"))
                .isEqualTo(1);
        // Its lease ends (as if it had stopped heartbeating) and the rescue takes it back; the
        // heartbeat may renew an expired lease no one took yet, so end it until the rescue wins.
        eventually().until(() -> {
            Task t = producer.find(pausedTask.get()).orElseThrow();
            if (t.status() == TaskStatus.RUNNING && t.fencingToken() == pausedToken.get()) {
                sql(
                        "UPDATE dbtasks_task SET lease_expires_at = ? WHERE id = ? AND lease_token = ?",
                        Instant.now().minus(Duration.ofHours(1)),
                        t.id(),
                        t.fencingToken());
                return false;
            }
            return true;
        });
        eventually()
                .alias("every task but the paused one's first run SUCCEEDED")
                .until(() -> producer.stats().tasks().getOrDefault(TaskStatus.SUCCEEDED, 0L) == n);
        resume.countDown(); // the paused holder wakes up and tries to commit its effect: refused
        Thread.sleep(300);

        assertThat(count("SELECT COUNT(*) FROM limit_effect")).isEqualTo(n);
        assertThat(count("SELECT COUNT(DISTINCT task_id) FROM limit_effect")).isEqualTo(n);
        assertThat(count("SELECT COUNT(*) FROM limit_effect WHERE token = ?", pausedToken.get()))
                .isZero();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE outcome = 'SUCCEEDED'"))
                .isEqualTo(n);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE outcome = 'LEASE_EXPIRED'"))
                .isEqualTo(1);
        assertThat(most.get())
                .as("handlers of the key at once, the paused one left out")
                .isEqualTo(1);
        if (statementClock()) {
            // The RUNNING intervals, the expired one included up to its rescue, never overlap.
            List<Instant[]> attempts = runs("SELECT 'mutex', started_at, finished_at FROM dbtasks_attempt")
                    .get("mutex");
            assertThat(attempts).hasSize(n + 1);
            assertThat(mostOverlapping(attempts)).isEqualTo(1);
        }
    }

    /**
     * A queue with limits that is not set fair claims in claim order while no limit binds: priority
     * first across keys, as a queue without limits, not round robin over keys.
     */
    @Test
    void aQueueWithLimitsNotSetFairClaimsInPriorityOrderAcrossKeysWhileNoLimitBinds() {
        DbTasks producer = producer();
        producer.limits().set(Limit.maxRunning(QUEUE, Limit.EVERY_KEY, 100));
        List<TaskRequest> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            requests.add(TaskRequest.builder(KIND)
                    .queue(QUEUE)
                    .concurrencyKey("low")
                    .payload(Map.of("key", "low"))
                    .build());
        }
        for (int i = 0; i < 20; i++) {
            requests.add(TaskRequest.builder(KIND)
                    .queue(QUEUE)
                    .concurrencyKey("high")
                    .priority(5)
                    .payload(Map.of("key", "high"))
                    .build());
        }
        producer.enqueueAll(requests);
        List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
        engine(b -> b.queue(QUEUE, 1)
                        .claimBatch(4)
                        .handler(KIND, Map.class, (ctx, p) -> order.add((String) p.get("key"))))
                .start();
        eventually().alias("every task ran").until(() -> order.size() == 40);
        assertThat(order.subList(0, 20))
                .as("the higher priority key's tasks all ran first, not in turns with the other key")
                .containsOnly("high");
    }

    /**
     * One key's backlog, enqueued first, does not hold back the others: keys at their limit are left
     * out of the candidates and the rest are served round robin.
     */
    @Test
    void aKeysBacklogDoesNotHoldBackTheOtherKeys() {
        DbTasks producer = producer();
        producer.limits().set(Limit.maxRunning(QUEUE, Limit.EVERY_KEY, 4));
        String smallKind = "limit.small";
        Map<String, AtomicInteger> started = new java.util.concurrent.ConcurrentHashMap<>();
        AtomicLong lastSmall = new AtomicLong();
        AtomicLong begin = new AtomicLong(Long.MAX_VALUE);
        for (int e = 0; e < 2; e++) {
            engine(b -> b.queue(QUEUE, 6)
                            .claimBatch(6)
                            .handler(KIND, Void.class, (ctx, p) -> {
                                started.computeIfAbsent("big", g -> new AtomicInteger())
                                        .incrementAndGet();
                                Thread.sleep(20);
                            })
                            .handler(smallKind, Void.class, (ctx, p) -> {
                                started.computeIfAbsent("small", g -> new AtomicInteger())
                                        .incrementAndGet();
                                lastSmall.accumulateAndGet(System.nanoTime() - begin.get(), Math::max);
                                Thread.sleep(20);
                            }))
                    .start();
        }
        // Warm-up, not measured: both engines claim and run keyed tasks of both kinds before the clock
        // starts, so the bound below measures the claim, not engine start-up or a cold JVM.
        List<TaskRequest> warmUp = new ArrayList<>();
        for (int k = 0; k < 10; k++) {
            for (int i = 0; i < 6; i++) {
                warmUp.add(TaskRequest.builder(i % 2 == 0 ? KIND : smallKind)
                        .queue(QUEUE)
                        .concurrencyKey("warm-" + k)
                        .build());
            }
        }
        producer.enqueueAll(warmUp);
        eventually()
                .atMost(Duration.ofSeconds(60))
                .alias("the warm-up tasks done")
                .until(() -> producer.stats().tasks().getOrDefault(TaskStatus.SUCCEEDED, 0L) == warmUp.size());
        started.clear();
        lastSmall.set(0);

        List<TaskRequest> requests = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            requests.add(
                    TaskRequest.builder(KIND).queue(QUEUE).concurrencyKey("big").build());
        }
        for (int k = 0; k < 30; k++) {
            for (int i = 0; i < 3; i++) {
                requests.add(TaskRequest.builder(smallKind)
                        .queue(QUEUE)
                        .concurrencyKey("small-" + k)
                        .build());
            }
        }
        // One transaction: every task becomes due at its commit, just before the clock starts.
        producer.enqueueAll(requests);
        begin.set(System.nanoTime());
        eventually()
                .alias("every task of the small keys started")
                .until(() -> started.getOrDefault("small", new AtomicInteger()).get() == 90);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE concurrency_key = 'big' AND status = 'PENDING'"))
                .as("the small keys did not wait for the big key's backlog")
                .isGreaterThan(1000);
        // Round robin gives the big key a turn in each round while the small keys' three tasks each
        // are served, so it is not starved; it does not fill its limit of 4 ahead of them.
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE concurrency_key = 'big' AND status <> 'PENDING'"))
                .as("the big key kept running meanwhile")
                .isGreaterThanOrEqualTo(2);
        if (database() != TestDatabase.H2) { // H2 runs in the test's JVM: too slow on a loaded machine
            assertThat(Duration.ofNanos(lastSmall.get()))
                    .as("the last small key's task started within 2 s of being enqueued")
                    .isLessThan(Duration.ofSeconds(2));
        }
    }

    @Test
    void aTaskHeldBackSaysWhyAndTheLoadOfEachKeyIsCounted() {
        DbTasks producer = producer();
        producer.limits().set(Limit.maxRunning(QUEUE, "busy", 1));
        long first = producer.enqueue(TaskRequest.builder(KIND)
                        .queue(QUEUE)
                        .concurrencyKey("busy")
                        .build())
                .task()
                .id();
        long second = producer.enqueue(TaskRequest.builder(KIND)
                        .queue(QUEUE)
                        .concurrencyKey("busy")
                        .build())
                .task()
                .id();
        long later = producer.enqueue(TaskRequest.builder(KIND)
                        .queue(QUEUE)
                        .concurrencyKey("busy")
                        .runAt(Instant.now().plus(Duration.ofHours(1)))
                        .build())
                .task()
                .id();
        CountDownLatch release = latch();
        DbTasks worker = engine(b -> b.queue(QUEUE, 2).handler(KIND, Void.class, (ctx, p) -> awaitLatch(release)));
        worker.start();
        awaitStatus(producer, first, TaskStatus.RUNNING);
        assertThat(producer.limits().waitReason(second)).hasValue("waiting for limit of key busy: 1/1 running");
        assertThat(producer.limits().waitReason(later))
                .as("not due yet: waits for its time, not the limit")
                .isEmpty();
        assertThat(producer.limits().waitReason(first)).isEmpty();
        assertThat(producer.limits().load(QUEUE))
                .containsExactly(new KeyLoad(QUEUE, "busy", 1, 2, Limit.maxRunning(QUEUE, "busy", 1)));
        release.countDown();
        awaitStatus(producer, second, TaskStatus.SUCCEEDED);
        assertThat(producer.limits().load(QUEUE))
                .containsExactly(new KeyLoad(QUEUE, "busy", 0, 1, Limit.maxRunning(QUEUE, "busy", 1)));
    }

    @Test
    void aKeyAtItsLimitWithNothingElseDueLeavesTheClaimLoopAtItsIdlePoll() throws Exception {
        DbTasks producer = producer();
        producer.limits().set(Limit.maxRunning(QUEUE, "busy", 1));
        long only = producer.enqueue(TaskRequest.builder(KIND)
                        .queue(QUEUE)
                        .concurrencyKey("busy")
                        .build())
                .task()
                .id();
        AtomicInteger keyedClaims = new AtomicInteger();
        CountDownLatch release = latch();
        DbTasks worker = DbTasks.builder(countingKeyedClaims(dataSource(), keyedClaims))
                .pollInterval(Duration.ofSeconds(2))
                .lease(Duration.ofSeconds(30))
                .queue(QUEUE, 2)
                .handler(KIND, Void.class, (ctx, p) -> awaitLatch(release))
                .build();
        engines.add(worker);
        worker.start();
        awaitStatus(producer, only, TaskStatus.RUNNING);
        // The key is at its limit but none of its tasks waits: the queue is idle, not held back, so
        // the loop polls at its 2 s interval (held back, it would poll about every 100 ms).
        int before = keyedClaims.get();
        Thread.sleep(3_000);
        assertThat(keyedClaims.get() - before).isLessThanOrEqualTo(5);
    }

    /** A DataSource whose connections count the candidate queries of claims within limits. */
    private static javax.sql.DataSource countingKeyedClaims(javax.sql.DataSource ds, AtomicInteger count) {
        return (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(
                ConcurrencyLimitContract.class.getClassLoader(),
                new Class<?>[] {javax.sql.DataSource.class},
                (proxy, m, args) -> {
                    Object r = invoke(ds, m, args);
                    if (!(r instanceof Connection c)) {
                        return r;
                    }
                    return java.lang.reflect.Proxy.newProxyInstance(
                            ConcurrencyLimitContract.class.getClassLoader(),
                            new Class<?>[] {Connection.class},
                            (p2, m2, a2) -> {
                                if (m2.getName().equals("prepareStatement")
                                        && a2[0] instanceof String sql
                                        && sql.contains("key_rank")) {
                                    count.incrementAndGet();
                                }
                                return invoke(c, m2, a2);
                            });
                });
    }

    private static Object invoke(Object target, java.lang.reflect.Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Test
    void theRetentionSweepDeletesTheRowsOfIdleKeysButNotOneAClaimHolds() throws Exception {
        DbTasks producer = producer();
        long waiting = producer.enqueue(TaskRequest.builder(KIND)
                        .queue(QUEUE)
                        .concurrencyKey("waits")
                        .runAt(Instant.now().plus(Duration.ofHours(1)))
                        .build())
                .task()
                .id();
        for (String key : List.of("gone", "waits", "held")) {
            sql("INSERT INTO dbtasks_concurrency_key (queue, concurrency_key) VALUES (?, ?)", QUEUE, key);
        }
        try (Connection claim = dataSource().getConnection()) {
            claim.setAutoCommit(false);
            try (PreparedStatement ps = claim.prepareStatement("SELECT concurrency_key FROM dbtasks_concurrency_key"
                    + " WHERE queue = ? AND concurrency_key = ? FOR UPDATE")) {
                ps.setString(1, QUEUE);
                ps.setString(2, "held");
                ps.executeQuery().close();
            }
            producer.sweepRetention(); // must not wait for the row the "claim" holds
            assertThat(keyRows()).containsExactly("held", "waits");
            claim.rollback();
        }
        producer.sweepRetention();
        assertThat(keyRows()).containsExactly("waits");
        producer.cancel(waiting);
        producer.sweepRetention();
        assertThat(keyRows()).isEmpty();
    }

    private List<String> keyRows() throws SQLException {
        List<String> keys = new ArrayList<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT concurrency_key FROM dbtasks_concurrency_key WHERE queue = ? ORDER BY concurrency_key")) {
            ps.setString(1, QUEUE);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    keys.add(rs.getString(1));
                }
            }
        }
        return keys;
    }

    @Test
    void aFifoKeyRunsItsTasksOneAtATimeInEnqueueOrderWhilePrioritiesOrderOthers() {
        DbTasks producer = producer();
        producer.limits().set(Limit.fifo(QUEUE, "seq"));
        List<Long> order = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ids.add(producer.enqueue(TaskRequest.builder(KIND)
                            .queue(QUEUE)
                            .concurrencyKey("seq")
                            .priority(i) // later tasks have higher priority: FIFO ignores it
                            .build())
                    .task()
                    .id());
        }
        AtomicInteger now = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        for (int e = 0; e < 2; e++) {
            engine(b -> b.queue(QUEUE, 3).handler(KIND, Void.class, (ctx, p) -> {
                        most.accumulateAndGet(now.incrementAndGet(), Math::max);
                        order.add(ctx.taskId());
                        Thread.sleep(20);
                        now.decrementAndGet();
                    }))
                    .start();
        }
        eventually().until(() -> order.size() == ids.size());
        assertThat(order).containsExactlyElementsOf(ids);
        assertThat(most.get()).isEqualTo(1);
    }

    // --- helpers ---

    /**
     * Whether the database's clock in a statement is the statement's (PostgreSQL's clock_timestamp,
     * MariaDB's UTC_TIMESTAMP), so that a claim's started_at is never earlier than the key lock it
     * waited for. H2's CURRENT_TIMESTAMP is the transaction's start, before that wait.
     */
    private boolean statementClock() {
        return database() != TestDatabase.H2;
    }

    private void createRunTable() throws SQLException {
        String ts = timestampType();
        try (Connection c = dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS limit_run");
            s.execute("CREATE TABLE limit_run (task_id BIGINT NOT NULL, token BIGINT NOT NULL, started_at " + ts
                    + " NOT NULL, ended_at " + ts + ")");
        }
    }

    private void createEffectTable() throws SQLException {
        try (Connection c = dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS limit_effect");
            s.execute("CREATE TABLE limit_effect (task_id BIGINT NOT NULL, token BIGINT NOT NULL)");
        }
    }

    private String timestampType() {
        return database() == TestDatabase.MARIADB
                ? "DATETIME(6)"
                : database() == TestDatabase.POSTGRESQL ? "TIMESTAMPTZ" : "TIMESTAMP(6) WITH TIME ZONE";
    }

    /**
     * Reads the start of a run from the database clock, waits, then records the run with its end by
     * the same clock: one commit per run.
     */
    private void recordRun(long taskId, long token, long millis) throws Exception {
        Instant start;
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT " + dialect().now() + " AS at");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            start = dialect().getInstant(rs, "at");
        }
        Thread.sleep(millis);
        sql(
                "INSERT INTO limit_run (task_id, token, started_at, ended_at) VALUES (?, ?, ?, "
                        + dialect().now() + ")",
                taskId,
                token,
                start);
    }

    /** Intervals by key from a query of (key, start, end). */
    private Map<String, List<Instant[]>> runs(String query) throws SQLException {
        Map<String, List<Instant[]>> byKey = new HashMap<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(query);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                Instant end = dialect().getInstant(rs, rs.getMetaData().getColumnLabel(3));
                assertThat(end).as("every recorded run ended").isNotNull();
                byKey.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(new Instant[] {
                    dialect().getInstant(rs, rs.getMetaData().getColumnLabel(2)), end
                });
            }
        }
        return byKey;
    }

    /** The most intervals open at one instant; an end and a start at the same instant do not overlap. */
    static int mostOverlapping(List<Instant[]> intervals) {
        List<Object[]> events = new ArrayList<>();
        for (Instant[] i : intervals) {
            events.add(new Object[] {i[0], 1});
            events.add(new Object[] {i[1], -1});
        }
        events.sort(Comparator.<Object[], Instant>comparing(e -> (Instant) e[0]).thenComparingInt(e -> (int) e[1]));
        int open = 0;
        int most = 0;
        for (Object[] e : events) {
            open += (int) e[1];
            most = Math.max(most, open);
        }
        return most;
    }
}
