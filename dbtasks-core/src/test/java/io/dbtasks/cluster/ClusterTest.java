package io.dbtasks.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskFilter;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.testing.TestDatabase;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster guarantee: 4 engines in this JVM plus 2 worker processes burn down 20,000 tasks whose
 * handler inserts into a table without a unique constraint. Every task must end SUCCEEDED and every
 * effect row must be present exactly once: nothing lost, nothing run twice.
 */
class ClusterTest {
    private static final Logger log = LoggerFactory.getLogger(ClusterTest.class);
    static final int TASKS = Integer.getInteger("dbtasks.cluster.tasks", 20_000);
    static final int ENGINES = 4;
    static final int PROCESSES = 2;
    static final int CONCURRENCY = 8;

    static DbTasks engine(DataSource ds, String workerId) {
        return DbTasks.builder(ds)
                .workerId(workerId)
                .queue(EffectHandler.QUEUE, CONCURRENCY)
                .claimBatch(CONCURRENCY)
                .pollInterval(Duration.ofMillis(100))
                .lease(Duration.ofSeconds(30))
                .handler(EffectHandler.KIND, Void.class, new EffectHandler(ds))
                .build();
    }

    @ParameterizedTest
    @EnumSource(
            value = TestDatabase.class,
            names = {"POSTGRESQL", "MARIADB"})
    void twentyThousandTasksOnSixEnginesRunExactlyOnceEach(TestDatabase db, @TempDir Path logs) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        DataSource ds = db.dataSource();
        DbTasks.builder(ds).workers(false).build().close(); // migrate
        db.clear();
        EffectHandler.createTable(ds);

        DbTasks producer = DbTasks.builder(ds).workers(false).build();
        List<TaskRequest> batch = new ArrayList<>();
        for (int i = 0; i < TASKS; i++) {
            batch.add(TaskRequest.builder(EffectHandler.KIND)
                    .queue(EffectHandler.QUEUE)
                    .reference("t-" + i)
                    .build());
            if (batch.size() == 1000) {
                producer.enqueueAll(batch);
                batch.clear();
            }
        }
        producer.enqueueAll(batch);

        List<Process> processes = new ArrayList<>();
        List<Path> logFiles = new ArrayList<>();
        long start = System.nanoTime();
        for (int p = 0; p < PROCESSES; p++) {
            Path logFile = Files.createTempFile(logs, "dbtasks-cluster-proc-" + p, ".log");
            logFiles.add(logFile);
            processes.add(startWorkerProcess(db, "proc-" + p, logFile));
        }
        // The worker processes first: started after them, the in-process engines (no JVM to boot)
        // could burn the whole backlog before a process was ready to claim.
        for (Path logFile : logFiles) {
            awaitReady(logFile);
        }
        List<DbTasks> engines = new ArrayList<>();
        for (int e = 0; e < ENGINES; e++) {
            DbTasks engine = engine(ds, "jvm-" + e);
            engines.add(engine);
            engine.start();
        }
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (System.nanoTime() < deadline && open(producer) > 0) {
            Thread.sleep(200);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        engines.forEach(e -> e.stop(Duration.ofSeconds(10)));
        for (Process p : processes) {
            assertThat(p.waitFor(60, TimeUnit.SECONDS))
                    .as("worker process exits")
                    .isTrue();
            assertThat(p.exitValue()).isZero();
        }

        long succeeded = producer.list(new TaskFilter(TaskStatus.SUCCEEDED, EffectHandler.QUEUE, null), 0, 1)
                .total();
        long effects;
        long distinct;
        long duplicates;
        List<String> perWorker = new ArrayList<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            effects = single(s, "SELECT COUNT(*) FROM cluster_effect");
            distinct = single(s, "SELECT COUNT(DISTINCT task_id) FROM cluster_effect");
            duplicates = single(
                    s,
                    "SELECT COUNT(*) FROM (SELECT task_id FROM cluster_effect GROUP BY task_id"
                            + " HAVING COUNT(*) > 1) d");
            try (ResultSet rs =
                    s.executeQuery("SELECT worker, COUNT(*) FROM cluster_effect GROUP BY worker ORDER BY worker")) {
                while (rs.next()) {
                    perWorker.add(rs.getString(1) + "=" + rs.getLong(2));
                }
            }
        }
        long lost = TASKS - distinct;
        log.info(
                "CLUSTER {}: tasks={} engines={}+{} processes wall={}s ({} tasks/s) succeeded={} effects={}"
                        + " duplicates={} lost={} per-worker={}",
                db,
                TASKS,
                ENGINES,
                PROCESSES,
                String.format("%.1f", seconds),
                String.format("%.0f", TASKS / seconds),
                succeeded,
                effects,
                duplicates,
                lost,
                perWorker);
        assertThat(succeeded).isEqualTo(TASKS);
        assertThat(duplicates).isZero();
        assertThat(lost).isZero();
        assertThat(effects).isEqualTo(TASKS);
        assertThat(perWorker)
                .as("every engine and process did some of the work")
                .hasSize(ENGINES + PROCESSES);
        producer.close();
    }

    private static long open(DbTasks tasks) {
        return tasks.list(new TaskFilter(TaskStatus.PENDING, EffectHandler.QUEUE, null), 0, 1)
                        .total()
                + tasks.list(new TaskFilter(TaskStatus.RUNNING, EffectHandler.QUEUE, null), 0, 1)
                        .total();
    }

    private static long single(Statement s, String sql) throws Exception {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void awaitReady(Path logFile) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.readString(logFile).contains("READY")) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("worker process did not start: " + Files.readString(logFile));
            }
            Thread.sleep(50);
        }
    }

    private static Process startWorkerProcess(TestDatabase db, String id, Path logFile) throws Exception {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        return new ProcessBuilder(
                        java, "-Xmx256m", "-cp", classpath, ClusterWorkerMain.class.getName(), db.url(), id, "300")
                .redirectErrorStream(true)
                .redirectOutput(logFile.toFile())
                .start();
    }
}
