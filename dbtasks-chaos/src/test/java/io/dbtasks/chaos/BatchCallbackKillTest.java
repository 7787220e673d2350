package io.dbtasks.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.batch.BatchRequest;
import io.dbtasks.testing.TestDatabase;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A batch's callback is enqueued exactly once even when the engine settling the batch's last chunk
 * is killed ({@code kill -9}) at that moment. Each round creates a batch of six chunks with an
 * on-finish callback; one {@link ChaosWorker} process claims them all, and the last chunk, in its
 * settle transaction, prints {@code LAST}; the test kills the process 0 to 120 ms later (the
 * delay swept over the rounds, so that kills land inside the chunk's transaction, on its commit
 * and after it) and starts the next worker, which rescues the chunk if its settle did not commit.
 * Then every callback must have SUCCEEDED with one SUCCEEDED attempt and one effect, and every
 * chunk's effect must exist once.
 */
class BatchCallbackKillTest {
    private static final int ROUNDS = Integer.getInteger("chaos.callback.rounds", 3);
    private static final int CHUNKS = 6;

    @ParameterizedTest
    @EnumSource(
            value = TestDatabase.class,
            names = {"POSTGRESQL", "MARIADB"})
    void callbackRunsOnceWhenTheEngineSettlingTheLastChunkIsKilled(TestDatabase db) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        List<Process> processes = new ArrayList<>();
        try (HikariDataSource ds = ChaosRun.pool(db.url(), 4)) {
            ChaosSchema.recreate(ds);
            DbTasks client = DbTasks.builder(ds).workers(false).build(); // migrates
            try (Connection c = ds.getConnection();
                    var s = c.createStatement()) {
                for (String t : List.of(
                        "dbtasks_attempt",
                        "dbtasks_task",
                        "dbtasks_dependency",
                        "dbtasks_workflow",
                        "dbtasks_batch_chunk",
                        "dbtasks_batch")) {
                    s.executeUpdate("DELETE FROM " + t);
                }
            }
            List<Long> batches = new ArrayList<>();
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Process worker = start(db.url(), "callback-kill-0", lines);
            processes.add(worker);
            for (int round = 0; round < ROUNDS; round++) {
                long batch = client.batches()
                        .create(BatchRequest.builder(ChaosSchema.CHUNK_KIND, CHUNKS)
                                .queue(ChaosSchema.QUEUE)
                                .maxAttempts(20)
                                .onFinish(TaskRequest.builder(ChaosSchema.CALLBACK_KIND)
                                        .queue(ChaosSchema.QUEUE)
                                        .build())
                                .build())
                        .id();
                batches.add(batch);
                String last = "LAST " + batch;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                String line;
                do {
                    line = lines.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                } while (line != null && !line.equals(last));
                assertThat(line).as("the last chunk of batch %s ran", batch).isEqualTo(last);
                Thread.sleep(ROUNDS == 1 ? 0 : round * 120L / (ROUNDS - 1));
                worker.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                lines.clear();
                worker = start(db.url(), "callback-kill-" + (round + 1), lines);
                processes.add(worker);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline && unfinishedCallbacks(ds, batches) > 0) {
                Thread.sleep(200);
            }
            Map<String, Long> r = figures(ds, batches);
            System.out.println("chaos[batch-callback] " + db + " " + r);
            assertThat(r.get("callbacks")).as("one callback per batch: %s", r).isEqualTo(ROUNDS);
            assertThat(r.get("callbacksSucceeded"))
                    .as("callbacks SUCCEEDED: %s", r)
                    .isEqualTo(ROUNDS);
            assertThat(r.get("callbackAttemptsSucceeded"))
                    .as("SUCCEEDED callback attempts: %s", r)
                    .isEqualTo(ROUNDS);
            assertThat(r.get("callbackEffects")).as("callback effects: %s", r).isEqualTo(ROUNDS);
            assertThat(r.get("chunkEffects")).as("chunk effects: %s", r).isEqualTo((long) ROUNDS * CHUNKS);
            assertThat(r.get("chunksWithDuplicateEffects"))
                    .as("chunks with two effects: %s", r)
                    .isZero();
            ChaosTest.report("batch callback under kill -9 " + db, r);
            client.close();
        } finally {
            for (Process p : processes) {
                p.destroyForcibly();
            }
        }
    }

    private static Process start(String url, String id, BlockingQueue<String> lines) throws IOException {
        String classpath = ChaosFixtures.classpath();
        String java = ChaosFixtures.java();
        Process p = new ProcessBuilder(
                        java,
                        "-Xmx192m",
                        "-XX:+UseSerialGC",
                        "-cp",
                        classpath,
                        ChaosWorker.class.getName(),
                        url,
                        id,
                        "6",
                        "3000")
                .redirectErrorStream(true)
                .start();
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader r =
                            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                        String l;
                        while ((l = r.readLine()) != null) {
                            lines.add(l);
                        }
                    } catch (IOException ended) {
                        // killed
                    }
                },
                id + "-output");
        reader.setDaemon(true);
        reader.start();
        return p;
    }

    private static long unfinishedCallbacks(HikariDataSource ds, List<Long> batches) throws SQLException {
        return figures(ds, batches).get("callbacks") - figures(ds, batches).get("callbacksSucceeded");
    }

    private static Map<String, Long> figures(HikariDataSource ds, List<Long> batches) throws SQLException {
        String callbacks = "SELECT id FROM dbtasks_task WHERE kind = '" + ChaosSchema.CALLBACK_KIND + "'";
        String chunks = "SELECT task_id FROM dbtasks_batch_chunk WHERE batch_id IN ("
                + String.join(", ", batches.stream().map(String::valueOf).toList()) + ")";
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("callbacks", one(ds, "SELECT COUNT(*) FROM (" + callbacks + ") c"));
        m.put(
                "callbacksSucceeded",
                one(
                        ds,
                        "SELECT COUNT(*) FROM dbtasks_task WHERE kind = '" + ChaosSchema.CALLBACK_KIND
                                + "' AND status = 'SUCCEEDED'"));
        m.put(
                "callbackAttemptsSucceeded",
                one(
                        ds,
                        "SELECT COUNT(*) FROM dbtasks_attempt WHERE outcome = 'SUCCEEDED' AND task_id IN (" + callbacks
                                + ")"));
        m.put("callbackEffects", one(ds, "SELECT COUNT(*) FROM chaos_effect WHERE task_id IN (" + callbacks + ")"));
        m.put("chunkEffects", one(ds, "SELECT COUNT(*) FROM chaos_effect WHERE task_id IN (" + chunks + ")"));
        m.put(
                "chunksWithDuplicateEffects",
                one(
                        ds,
                        "SELECT COUNT(*) FROM (SELECT task_id FROM chaos_effect WHERE task_id IN (" + chunks
                                + ") GROUP BY task_id HAVING COUNT(*) > 1) d"));
        // informational: kills that landed before the last chunk's settle committed (it was rescued)
        m.put(
                "killedBeforeCommit",
                one(
                        ds,
                        "SELECT COUNT(DISTINCT task_id) FROM dbtasks_attempt WHERE outcome = 'LEASE_EXPIRED'"
                                + " AND task_id IN (" + chunks + ")"));
        return m;
    }

    private static long one(HikariDataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement(sql);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
