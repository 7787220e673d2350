package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.NonRetryableException;
import io.dbtasks.RetryPolicy;
import io.dbtasks.batch.Batch;
import io.dbtasks.batch.BatchProgress;
import io.dbtasks.batch.BatchRequest;
import io.dbtasks.batch.ChunkContext;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Chunked batches: each chunk's effect commits exactly once with its
 * done record, a crash resumes with the chunks not yet done, progress is countable, and chunks run
 * on several engines at once. Effects go to a table without a unique constraint, so a chunk done
 * twice would show as two rows.
 */
public abstract class BatchContract extends EngineHarness {

    /** The batch parameters of the tests' batch kind. */
    public record Params(String label) {}

    @BeforeEach
    void createEffectTable() throws Exception {
        try (Connection c = database().dataSource().getConnection();
                Statement s = c.createStatement()) {
            try {
                s.executeUpdate("DROP TABLE batch_effect");
            } catch (Exception absent) {
                // first run
            }
            s.executeUpdate("CREATE TABLE batch_effect (batch_id BIGINT NOT NULL, chunk INT NOT NULL,"
                    + " label VARCHAR(100) NOT NULL, worker VARCHAR(200) NOT NULL)");
        }
    }

    private static void insertEffect(ChunkContext chunk, Connection tx, Params params) throws Exception {
        try (PreparedStatement ps =
                tx.prepareStatement("INSERT INTO batch_effect (batch_id, chunk, label, worker) VALUES (?, ?, ?, ?)")) {
            ps.setLong(1, chunk.batchId());
            ps.setInt(2, chunk.chunk());
            ps.setString(3, params.label());
            ps.setString(4, chunk.task().workerId());
            ps.executeUpdate();
        }
    }

    /** Effects per chunk of the batch. */
    private Map<Integer, Integer> effectsPerChunk(long batchId) throws Exception {
        Map<Integer, Integer> counts = new HashMap<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT chunk, COUNT(*) FROM batch_effect WHERE batch_id = ? GROUP BY chunk")) {
            ps.setLong(1, batchId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    counts.put(rs.getInt(1), rs.getInt(2));
                }
            }
        }
        return counts;
    }

    @Test
    void aBatchOfOneHundredChunksKilledAboutHalfwayResumesAndDoesEveryChunkExactlyOnce() throws Exception {
        int chunks = 100;
        AtomicInteger started = new AtomicInteger();
        CountDownLatch half = latch();
        CountDownLatch never = latch();
        // Engine A on a pool of its own: after 50 chunks it keeps its next chunks in flight, effect
        // written but not committed, until its pool is shut (connections aborted) under it.
        HikariDataSource poolA = database().newPool(8);
        DbTasks a;
        try {
            a = DbTasks.builder(poolA)
                    .workerId("worker-a")
                    .queue("default", 4)
                    .lease(Duration.ofSeconds(2))
                    .pollInterval(Duration.ofMillis(50))
                    .rescueInterval(Duration.ofHours(1))
                    .shutdownTimeout(Duration.ZERO)
                    .chunkHandler("effect", Params.class, (chunk, tx, p) -> {
                        insertEffect(chunk, tx, p);
                        if (started.incrementAndGet() > chunks / 2) {
                            half.countDown();
                            never.await();
                            throw new IllegalStateException("worker-a was killed");
                        }
                    })
                    .build();
        } catch (RuntimeException e) {
            poolA.close();
            throw e;
        }
        Batch batch = a.batches()
                .create(BatchRequest.builder("effect", chunks)
                        .params(new Params("run-1"))
                        .name("kill test")
                        .maxAttempts(5)
                        .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(50)))
                        .build());
        assertThat(a.batches().progress(batch.id())).isEqualTo(new BatchProgress(batch.id(), chunks, 0, 0, 0, chunks));
        a.start();
        awaitLatch(half);
        poolA.close(); // the crash: in-flight transactions are aborted, nothing more commits for A
        never.countDown();
        try {
            a.stop(Duration.ZERO);
        } catch (RuntimeException expected) {
            // its pool is gone
        }
        BatchProgress atCrash = producer().batches().progress(batch.id());
        assertThat(atCrash.done()).isBetween(chunks / 2 - 4, chunks / 2);
        assertThat(atCrash.remaining()).isEqualTo(chunks - atCrash.done());

        // Engine B resumes: it rescues A's expired leases and runs every chunk not yet done.
        DbTasks b = engine(x -> x.workerId("worker-b")
                .queue("default", 4)
                .chunkHandler("effect", Params.class, BatchContract::insertEffect));
        b.start();
        eventually()
                .atMost(Duration.ofSeconds(60))
                .alias("every chunk done")
                .until(() -> b.batches().progress(batch.id()).done() == chunks);
        BatchProgress end = b.batches().progress(batch.id());
        assertThat(end).isEqualTo(new BatchProgress(batch.id(), chunks, chunks, 0, 0, 0));
        assertThat(end.finished()).isTrue();
        Map<Integer, Integer> effects = effectsPerChunk(batch.id());
        assertThat(effects).hasSize(chunks);
        assertThat(effects.values()).containsOnly(1);
        assertThat(count("SELECT COUNT(*) FROM batch_effect WHERE worker = 'worker-b'"))
                .isEqualTo(chunks - atCrash.done());
    }

    @Test
    void progressCountsDoneAndFailedChunksAndFailedChunksCanBeRetried() throws Exception {
        AtomicBoolean broken = new AtomicBoolean(true);
        DbTasks tasks = engine(b -> b.queue("default", 2).chunkHandler("flaky", Params.class, (chunk, tx, p) -> {
            insertEffect(chunk, tx, p);
            if (chunk.chunk() == 2 && broken.get()) {
                throw new NonRetryableException("chunk 2 is broken");
            }
        }));
        Batch batch = tasks.batches()
                .create(BatchRequest.builder("flaky", 5)
                        .params(new Params("p"))
                        .idempotencyKey("flaky-once")
                        .build());
        Batch again = tasks.batches()
                .create(BatchRequest.builder("flaky", 5)
                        .idempotencyKey("flaky-once")
                        .build());
        assertThat(again.duplicate()).isTrue();
        assertThat(again.id()).isEqualTo(batch.id());
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(5);

        tasks.start();
        eventually().until(() -> tasks.batches().progress(batch.id()).finished());
        assertThat(tasks.batches().progress(batch.id())).isEqualTo(new BatchProgress(batch.id(), 5, 4, 1, 0, 0));
        assertThat(effectsPerChunk(batch.id())).doesNotContainKey(2); // the failed chunk's effect rolled back

        broken.set(false);
        assertThat(tasks.batches().retryFailed(batch.id())).isEqualTo(1);
        eventually().until(() -> tasks.batches().progress(batch.id()).done() == 5);
        assertThat(effectsPerChunk(batch.id()).values()).hasSize(5).containsOnly(1);
    }

    @Test
    void eachCallbackIsEnqueuedOnceWithTheLastChunkAndARetriedChunkLetsOnSuccessRun() throws Exception {
        AtomicBoolean broken = new AtomicBoolean(true);
        Map<String, AtomicInteger> callbacks = new ConcurrentHashMap<>();
        List<DbTasks> both = new java.util.ArrayList<>();
        for (int i = 0; i < 2; i++) {
            both.add(engine(b -> b.queue("default", 2)
                    .chunkHandler("flaky", Params.class, (chunk, tx, p) -> {
                        insertEffect(chunk, tx, p);
                        if (chunk.chunk() == 4 && broken.get()) {
                            throw new NonRetryableException("chunk 4 is broken");
                        }
                    })
                    .handler(
                            "callback",
                            String.class,
                            (ctx, which) -> callbacks
                                    .computeIfAbsent(which, k -> new AtomicInteger())
                                    .incrementAndGet())));
        }
        DbTasks tasks = both.get(0);
        Batch batch = tasks.batches()
                .create(BatchRequest.builder("flaky", 10)
                        .params(new Params("p"))
                        .onFinish(io.dbtasks.TaskRequest.of("callback", "finish"))
                        .onSuccess(io.dbtasks.TaskRequest.of("callback", "success"))
                        .onFailure(io.dbtasks.TaskRequest.of("callback", "failure"))
                        .build());
        assertThat(tasks.batches().progress(batch.id()).chunks()).isEqualTo(10);
        both.forEach(DbTasks::start);

        long onFinish = callbackTask("finish");
        long onSuccess = callbackTask("success");
        long onFailure = callbackTask("failure");
        awaitStatus(tasks, onFinish, io.dbtasks.TaskStatus.SUCCEEDED);
        awaitStatus(tasks, onFailure, io.dbtasks.TaskStatus.SUCCEEDED);
        assertThat(awaitStatus(tasks, onSuccess, io.dbtasks.TaskStatus.CANCELLED)
                        .lastError())
                .contains("chunk 4 is broken");
        // Each callback started after the last chunk's attempt ended.
        long lastChunkEnd = count(
                "SELECT MAX(a.id) FROM dbtasks_attempt a JOIN dbtasks_batch_chunk c"
                        + " ON c.task_id = a.task_id WHERE c.batch_id = ?",
                batch.id());
        long firstCallback = count("SELECT MIN(id) FROM dbtasks_attempt WHERE task_id IN (?, ?)", onFinish, onFailure);
        assertThat(firstCallback).isGreaterThan(lastChunkEnd);

        broken.set(false);
        assertThat(tasks.batches().retryFailed(batch.id())).isEqualTo(1);
        awaitStatus(tasks, onSuccess, io.dbtasks.TaskStatus.SUCCEEDED);
        assertThat(effectsPerChunk(batch.id()).values()).hasSize(10).containsOnly(1);
        assertThat(callbacks).containsOnlyKeys("finish", "failure", "success");
        assertThat(callbacks.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
    }

    @Test
    void aRetriedChunkCountsOnceSoTheOnFinishCallbackWaitsForTheOtherChunks() throws Exception {
        AtomicBoolean broken = new AtomicBoolean(true);
        CountDownLatch gate = latch();
        DbTasks tasks = engine(b -> b.queue("default", 2)
                .chunkHandler("gated", Params.class, (chunk, tx, p) -> {
                    if (chunk.chunk() == 0 && broken.get()) {
                        throw new NonRetryableException("chunk 0 is broken");
                    }
                    if (chunk.chunk() == 1) {
                        gate.await();
                    }
                })
                .handler("callback", String.class, (ctx, which) -> {}));
        Batch batch = tasks.batches()
                .create(BatchRequest.builder("gated", 2)
                        .params(new Params("g"))
                        .onFinish(io.dbtasks.TaskRequest.of("callback", "finish"))
                        .build());
        long first = count("SELECT task_id FROM dbtasks_batch_chunk WHERE batch_id = ? AND chunk = 0", batch.id());
        long second = count("SELECT task_id FROM dbtasks_batch_chunk WHERE batch_id = ? AND chunk = 1", batch.id());
        long onFinish = callbackTask("finish");
        tasks.start();
        awaitStatus(tasks, first, io.dbtasks.TaskStatus.FAILED);
        awaitStatus(tasks, second, io.dbtasks.TaskStatus.RUNNING);

        broken.set(false);
        assertThat(tasks.batches().retryFailed(batch.id())).isEqualTo(1);
        awaitStatus(tasks, first, io.dbtasks.TaskStatus.SUCCEEDED);
        // Chunk 1 still runs: the retried chunk's failure and success count as one.
        assertThat(tasks.find(onFinish).orElseThrow().status()).isEqualTo(io.dbtasks.TaskStatus.WAITING);

        gate.countDown();
        awaitStatus(tasks, onFinish, io.dbtasks.TaskStatus.SUCCEEDED);
    }

    private long callbackTask(String which) {
        return count("SELECT id FROM dbtasks_task WHERE kind = 'callback' AND payload = ?", "\"" + which + "\"");
    }

    @Test
    void aRunningChunkWhoseLeaseExpiredCountsAsRescuePending() {
        DbTasks tasks = producer();
        Batch batch = tasks.batches().create(BatchRequest.builder("effect", 3).build());
        long live = count("SELECT task_id FROM dbtasks_batch_chunk WHERE batch_id = ? AND chunk = 0", batch.id());
        long dead = count("SELECT task_id FROM dbtasks_batch_chunk WHERE batch_id = ? AND chunk = 1", batch.id());
        // Two chunks claimed by instances; the second instance then died (its lease ran out).
        for (long id : List.of(live, dead)) {
            sql(
                    "UPDATE dbtasks_task SET status = 'RUNNING', attempt = 1, lease_owner = 'instance', lease_token = 1,"
                            + " lease_expires_at = ? WHERE id = ?",
                    java.time.Instant.now().plus(Duration.ofHours(1)),
                    id);
        }
        expireLease(dead);

        BatchProgress p = tasks.batches().progress(batch.id());
        assertThat(p).isEqualTo(new BatchProgress(batch.id(), 3, 0, 0, 2, 1, 1));
        assertThat(p.remaining()).isEqualTo(3);
    }

    @Test
    void chunksRunInParallelOnSeveralEnginesAndEachOnce() throws Exception {
        int chunks = 40;
        Set<String> workers = ConcurrentHashMap.newKeySet();
        java.util.function.Function<String, DbTasks> engineNamed = name -> engine(b -> b.workerId(name)
                .queue("default", 2)
                .claimAhead(false)
                .chunkHandler("slow", Params.class, (chunk, tx, p) -> {
                    workers.add(chunk.task().workerId());
                    insertEffect(chunk, tx, p);
                    Thread.sleep(100);
                }));
        DbTasks one = engineNamed.apply("engine-1");
        DbTasks two = engineNamed.apply("engine-2");
        Batch batch = one.batches()
                .create(BatchRequest.builder("slow", chunks)
                        .params(new Params("parallel"))
                        .build());
        one.start();
        two.start();
        eventually()
                .atMost(Duration.ofSeconds(60))
                .until(() -> one.batches().progress(batch.id()).done() == chunks);
        assertThat(workers).containsExactlyInAnyOrder("engine-1", "engine-2");
        assertThat(effectsPerChunk(batch.id()).values()).hasSize(chunks).containsOnly(1);
    }
}
