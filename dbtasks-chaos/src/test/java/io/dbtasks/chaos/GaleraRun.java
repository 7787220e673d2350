package io.dbtasks.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskRequest;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Runs on a {@link GaleraCluster}: the chaos run (worker processes spread over the nodes, a node
 * killed with {@code SIGKILL} and restarted mid-run, then the {@link Checker}) and the burn-down
 * (engines in this JVM on every node or all on one, a queue of ready transactional tasks worked off,
 * the certification conflicts counted).
 */
final class GaleraRun {
    /** Galera's conflict counters, summed over the nodes: certification failures and brute-force aborts. */
    static final List<String> CONFLICT_COUNTERS =
            List.of("wsrep_local_cert_failures", "wsrep_local_bf_aborts", "Innodb_deadlocks");

    private GaleraRun() {}

    /**
     * How long a pool here waits for a connection: a call on a node that is down fails after it
     * (seconds, not the minutes a test's calls would add up to).
     */
    static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(3);

    /** A pool on {@code url} (one node, or several) that fails within {@link #CONNECTION_TIMEOUT}. */
    static HikariDataSource pool(String url, int size) {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(url + "&connectTimeout=2000");
        hc.setMaximumPoolSize(size);
        hc.setConnectionTimeout(CONNECTION_TIMEOUT.toMillis());
        hc.setInitializationFailTimeout(-1);
        return new HikariDataSource(hc);
    }

    /** A {@link #pool} whose reads wait until the node applied every earlier commit of the cluster. */
    static HikariDataSource causalPool(String url, int size) {
        return pool(url + "&sessionVariables=wsrep_sync_wait=1", size);
    }

    /** Migrates (through node 1) and empties the dbtasks and chaos tables. */
    static void reset(GaleraCluster cluster) throws SQLException {
        try (HikariDataSource ds = pool(cluster.url(0, "chaos"), 2)) {
            DbTasks.builder(ds).workers(false).build().close(); // migrates
            ChaosSchema.recreate(ds);
            try (Connection c = ds.getConnection();
                    Statement s = c.createStatement()) {
                for (String t : List.of("dbtasks_attempt", "dbtasks_task", "dbtasks_lock", "dbtasks_lock_waiter")) {
                    s.executeUpdate("DELETE FROM " + t);
                }
            }
        }
    }

    /**
     * The chaos run: {@code workers} {@link ChaosWorker} processes, worker i on node i mod n; an
     * enqueuer on the sequential URL; {@code nodeKills} times a node (in turn from the second) killed
     * with {@code SIGKILL}, down for two seconds, restarted and awaited until Synced.
     *
     * @return the figures: the checker's, restarts, conflicts
     */
    static Map<String, Long> chaos(GaleraCluster cluster, int tasks, int workers, int nodeKills) throws Exception {
        reset(cluster);
        Path logDir = Path.of("target", "chaos", "galera");
        Files.createDirectories(logDir);
        Map<String, Long> report = new LinkedHashMap<>();
        Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        Set<String> attempted = ConcurrentHashMap.newKeySet();
        List<Process> processes = new ArrayList<>();
        List<Long> restartMs = new ArrayList<>();
        List<Long> firstCompletionMs = new ArrayList<>();
        long ist = 0;
        Thread enqueueing = null;
        try (HikariDataSource ds = causalPool(cluster.sequentialUrl("chaos"), 4)) {
            DbTasks client = DbTasks.builder(ds).workers(false).migrate(false).build();
            for (int i = 0; i < workers; i++) {
                processes.add(startWorker(cluster.url(i % cluster.size(), "chaos"), "galera-w" + i, logDir));
            }
            for (int i = 0; i < tasks; i++) {
                attempted.add("chaos-" + i);
            }
            long start = System.nanoTime();
            Enqueuer enqueuer = new Enqueuer(client, acknowledged);
            enqueueing = new Thread(
                    () -> {
                        try {
                            enqueuer.run(tasks, 50, Duration.ofSeconds(Math.max(15, nodeKills * 12L)));
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "galera-enqueuer");
            enqueueing.start();
            long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (succeeded(ds) < 20 && System.nanoTime() < warm) {
                Thread.sleep(100);
            }
            for (int k = 0; k < nodeKills; k++) {
                int node = (k + 1) % cluster.size();
                long before = succeeded(ds);
                log("kill -9 of node n" + (node + 1));
                cluster.kill(node);
                long killed = System.nanoTime();
                Long first = null;
                long downUntil = killed + TimeUnit.SECONDS.toNanos(2);
                while (System.nanoTime() < downUntil || first == null && System.nanoTime() < killed + 60_000_000_000L) {
                    if (first == null && succeeded(ds) > before) {
                        first = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                    }
                    Thread.sleep(20);
                }
                firstCompletionMs.add(first == null ? -1 : first);
                long ms = cluster.restart(node);
                List<String> transfers = cluster.transferLines(node);
                boolean byIst = !transfers.isEmpty()
                        && transfers.get(transfers.size() - 1).contains("IST");
                ist += byIst ? 1 : 0;
                restartMs.add(ms);
                log("node n" + (node + 1) + " Synced " + ms + " ms after its restart (" + (byIst ? "IST" : "SST")
                        + "); first completion " + first + " ms after the kill");
                Thread.sleep(2_000);
            }
            enqueueing.join(TimeUnit.MINUTES.toMillis(10));
            log("enqueued " + acknowledged.size() + " (" + enqueuer.failedCalls() + " failed calls retried); draining");
            long drainDeadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            while (open(ds) > 0 && System.nanoTime() < drainDeadline) {
                for (int i = 0; i < processes.size(); i++) {
                    if (!processes.get(i).isAlive()) {
                        log("worker " + i + " exited; starting a replacement");
                        processes.set(i, startWorker(cluster.url(i % cluster.size(), "chaos"), "galera-w" + i, logDir));
                    }
                }
                Thread.sleep(200);
            }
            report.put("runSeconds", TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
            stop(processes);
            client.close();
            report.putAll(Checker.check(ds, attempted, acknowledged));
            if (report.get("repeatedTokens") > 0) {
                logRepeatedTokens(ds);
            }
        } finally {
            processes.forEach(Process::destroyForcibly);
            if (enqueueing != null) {
                enqueueing.interrupt(); // it retries a failed call until interrupted
            }
        }
        report.put("workers", (long) workers);
        report.put("nodeKills", (long) nodeKills);
        report.put("rejoinedByIst", ist);
        spread(report, "restartToSynced", restartMs);
        spread(report, "killToFirstCompletion", firstCompletionMs);
        for (String counter : CONFLICT_COUNTERS) {
            report.put(counter, cluster.sum(counter)); // a restarted node counts from its restart
        }
        log("report " + report);
        return report;
    }

    /**
     * The burn-down: {@code tasks} transactional tasks enqueued and replicated first, then {@code
     * engines} engines of {@code concurrency} handlers each, on node i mod n ({@code spread}) or all on
     * node 1, work them off; the handler writes its effect row and returns at once.
     *
     * @return tasks, milliseconds, tasks per second, conflicts counted by the nodes and by the engines,
     *     and the checker's figures
     */
    static Map<String, Long> burnDown(GaleraCluster cluster, boolean spread, int tasks, int engines, int concurrency)
            throws Exception {
        reset(cluster);
        Map<String, Long> report = new LinkedHashMap<>();
        Set<String> keys = ConcurrentHashMap.newKeySet();
        try (HikariDataSource ds = causalPool(cluster.url(0, "chaos"), 4)) {
            DbTasks client = DbTasks.builder(ds).workers(false).migrate(false).build();
            for (int from = 0; from < tasks; from += 500) {
                List<TaskRequest> batch = new ArrayList<>();
                for (int i = from; i < Math.min(tasks, from + 500); i++) {
                    String key = "chaos-" + i;
                    keys.add(key);
                    batch.add(TaskRequest.builder(ChaosSchema.TX_KIND)
                            .queue(ChaosSchema.QUEUE)
                            .idempotencyKey(key)
                            .maxAttempts(50)
                            .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(50)))
                            .build());
                }
                client.enqueueAll(batch);
            }
            client.close();
            Map<String, Long> before = new LinkedHashMap<>();
            for (String counter : CONFLICT_COUNTERS) {
                before.put(counter, cluster.sum(counter));
            }
            List<HikariDataSource> pools = new ArrayList<>();
            List<DbTasks> running = new ArrayList<>();
            long start;
            long elapsed;
            try {
                for (int i = 0; i < engines; i++) {
                    HikariDataSource pool =
                            pool(cluster.url(spread ? i % cluster.size() : 0, "chaos"), concurrency + 4);
                    pools.add(pool);
                    running.add(DbTasks.builder(pool)
                            .workerId("burn-" + i)
                            .migrate(false)
                            .queue(ChaosSchema.QUEUE, concurrency)
                            .lease(Duration.ofSeconds(10))
                            .pollInterval(Duration.ofMillis(100))
                            .transactionalHandler(ChaosSchema.TX_KIND, Void.class, (ctx, tx, payload) -> {
                                try (PreparedStatement ps = tx.prepareStatement(
                                        "INSERT INTO chaos_effect (task_id, token, worker) VALUES (?, ?, ?)")) {
                                    ps.setLong(1, ctx.taskId());
                                    ps.setLong(2, ctx.fencingToken());
                                    ps.setString(3, ctx.workerId());
                                    ps.executeUpdate();
                                }
                            })
                            .build());
                }
                start = System.nanoTime();
                running.forEach(DbTasks::start);
                long deadline = start + TimeUnit.MINUTES.toNanos(10);
                while (open(ds) > 0 && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                elapsed = System.nanoTime() - start;
            } finally {
                long engineRollbacks = 0;
                for (DbTasks e : running) {
                    engineRollbacks += e.deadlocks();
                    e.stop(Duration.ofSeconds(10));
                }
                report.put("engineRollbacks", engineRollbacks);
                pools.forEach(HikariDataSource::close);
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(elapsed);
            report.put("tasks", (long) tasks);
            report.put("engines", (long) engines);
            report.put("nodesUsed", (long) (spread ? Math.min(engines, cluster.size()) : 1));
            report.put("burnDownMs", ms);
            report.put("tasksPerSecond", tasks * 1000L / Math.max(1, ms));
            for (String counter : CONFLICT_COUNTERS) {
                report.put(counter, cluster.sum(counter) - before.get(counter));
            }
            report.putAll(Checker.check(ds, keys, keys));
        }
        log("burn-down " + (spread ? "spread" : "one node") + " " + report);
        return report;
    }

    /** Logs the attempts that share a token, and the tasks' rows, for the post-mortem. */
    private static void logRepeatedTokens(HikariDataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                java.sql.ResultSet rs = s.executeQuery("SELECT a.id, a.task_id, a.attempt, a.worker, a.lease_token,"
                        + " a.started_at, a.finished_at, a.outcome, t.status, t.lease_token FROM dbtasks_attempt a"
                        + " JOIN dbtasks_task t ON t.id = a.task_id WHERE a.lease_token IN (SELECT lease_token FROM"
                        + " dbtasks_attempt GROUP BY lease_token HAVING COUNT(*) > 1) ORDER BY a.lease_token, a.id")) {
            while (rs.next()) {
                StringBuilder row = new StringBuilder("repeated token: ");
                for (int i = 1; i <= 10; i++) {
                    row.append(rs.getMetaData().getColumnLabel(i))
                            .append('=')
                            .append(rs.getString(i))
                            .append(' ');
                }
                log(row.toString());
            }
        }
    }

    private static long succeeded(HikariDataSource ds) {
        try {
            return Checker.succeeded(ds);
        } catch (SQLException e) {
            return -1;
        }
    }

    private static long open(HikariDataSource ds) {
        try {
            return Checker.open(ds);
        } catch (SQLException e) {
            return Long.MAX_VALUE;
        }
    }

    private static Process startWorker(String url, String id, Path logDir) throws IOException {
        String classpath = ChaosFixtures.classpath();
        String java = ChaosFixtures.java();
        return new ProcessBuilder(
                        java,
                        "-Xmx192m",
                        "-XX:+UseSerialGC",
                        "-cp",
                        classpath,
                        ChaosWorker.class.getName(),
                        url + "&connectTimeout=2000&socketTimeout=10000",
                        id + "-" + Instant.now().toEpochMilli(),
                        "6",
                        "3000")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        logDir.resolve(id + ".log").toFile()))
                .start();
    }

    private static void stop(List<Process> processes) throws InterruptedException {
        for (Process p : processes) {
            try {
                OutputStream in = p.getOutputStream();
                in.write("STOP\n".getBytes(StandardCharsets.UTF_8));
                in.flush();
            } catch (IOException gone) {
                // already gone
            }
        }
        for (Process p : processes) {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    /** Puts the median, least and greatest of {@code values} under {@code prefix}*{@code Ms}. */
    static void spread(Map<String, Long> report, String prefix, List<Long> values) {
        if (values.isEmpty()) {
            return;
        }
        List<Long> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        report.put(
                prefix + "MedianMs", n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2);
        report.put(prefix + "MinMs", sorted.get(0));
        report.put(prefix + "MaxMs", sorted.get(n - 1));
    }

    private static void log(String message) {
        System.out.println("chaos[galera] " + Instant.now() + " " + message);
    }
}
