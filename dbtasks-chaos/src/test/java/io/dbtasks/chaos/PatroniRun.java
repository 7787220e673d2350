package io.dbtasks.chaos;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskRequest;
import io.dbtasks.chaos.PatroniCluster.Member;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One chaos scenario on a {@link PatroniCluster}: {@code workers} {@link ChaosWorker} processes and an
 * enqueuer on the cluster's multi-host URL ({@code targetServerType=primary}), one fault on the
 * leader once tasks are flowing, a drain, the {@link Checker}, and the counts only a failover can
 * produce: acknowledged task ids that now name another task ({@code idsReissued}) and fencing tokens
 * that a handler was given for two different tasks ({@code tokensReissued}, from the workers' {@code
 * RAN} lines, a record outside the database).
 */
final class PatroniRun {
    enum Fault {
        /** {@code kill -9} of the leader's postmaster; Patroni fails over ({@code primary_start_timeout: 0}). */
        KILL9,
        /**
         * {@code SIGSTOP} of the leader's Patroni and PostgreSQL processes (a stopped host) until another
         * member leads, then {@code SIGCONT}: the old leader must be demoted.
         */
        STOP,
        /** {@code patronictl switchover} to a replica, under load. */
        SWITCHOVER
    }

    private final PatroniCluster cluster;
    private String name;
    private final Fault fault;
    private final boolean synchronous;
    private final int tasks;
    private final int workers;
    private final Duration spread;
    private final Duration lag;
    private final Duration lease = Duration.ofSeconds(3);
    private Path logDir;
    private final List<Process> processes = new ArrayList<>();
    private final Set<String> attempted = ConcurrentHashMap.newKeySet();
    private final Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> acknowledgedIds = new ConcurrentHashMap<>();
    private final AtomicLong failedCalls = new AtomicLong();
    private int generation;
    private long respawns;
    private String url;
    private boolean transactionPooling;

    /**
     * @param cluster the cluster, healthy, in the mode {@code synchronous} says
     * @param fault the fault
     * @param synchronous whether Patroni's {@code synchronous_mode} is on
     * @param tasks tasks to enqueue
     * @param workers worker processes
     * @param spread how long enqueuing takes, roughly
     * @param lag for KILL9 and STOP without synchronous mode: how long the leader's WAL senders are
     *     stopped ({@code SIGSTOP}) just before the fault, so that the leader commits what the replicas
     *     never receive (KILL9 kills them with the postmaster, STOP resumes them with the host, when
     *     another member leads already); zero: the natural lag only
     * @param label a suffix for the logs' directory
     */
    PatroniRun(
            PatroniCluster cluster,
            Fault fault,
            boolean synchronous,
            int tasks,
            int workers,
            Duration spread,
            Duration lag,
            String label)
            throws IOException {
        this.cluster = cluster;
        this.fault = fault;
        this.synchronous = synchronous;
        this.tasks = tasks;
        this.workers = workers;
        this.spread = spread;
        this.lag = lag;
        this.name = "patroni-" + fault.name().toLowerCase() + "-" + (synchronous ? "sync" : "async") + label;
        this.url = cluster.multiHostUrl("chaos");
        this.logDir = Path.of("target", "chaos", name);
        Files.createDirectories(logDir);
        try (var old = Files.list(logDir)) {
            for (Path p : old.toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /**
     * Runs the engines and the enqueuer on {@code url} instead of the cluster's multi-host URL: for
     * PgBouncer in front of the members.
     *
     * @param url the JDBC URL (multi-host over the bouncers, {@code targetServerType=primary})
     * @param transactionPooling whether the bouncers pool transactions (the engines are told so)
     * @param suffix a suffix for the logs' directory and the name in the log lines
     * @return this run
     * @throws IOException if the logs' directory cannot be made
     */
    PatroniRun through(String url, boolean transactionPooling, String suffix) throws IOException {
        this.url = url;
        this.transactionPooling = transactionPooling;
        this.name = name + "-" + suffix;
        this.logDir = Path.of("target", "chaos", name);
        Files.createDirectories(logDir);
        try (var old = Files.list(logDir)) {
            for (Path p : old.toList()) {
                Files.deleteIfExists(p);
            }
        }
        return this;
    }

    /**
     * Runs it.
     *
     * @return the figures: the checker's, {@code idsReissued}, {@code tokensReissued}, {@code
     *     newLeaderMs} (failure to another member leading), {@code firstCompletionMs} (failure to the
     *     first task completed after it; for SWITCHOVER polled from when patronictl returned), and for
     *     STOP {@code oldLeaderReclaimed} (1 if the old leader took its key back after SIGCONT) with
     *     {@code oldLeaderFencedMs} or {@code newLeaderDemotedMs} (SIGCONT to one leader again)
     */
    Map<String, Long> run() throws Exception {
        Map<String, Long> report = new LinkedHashMap<>();
        try (HikariDataSource ds = ChaosRun.pool(url, 3)) {
            ChaosSchema.recreate(ds);
            DbTasks client = DbTasks.builder(ds)
                    .workers(false)
                    .transactionPooling(transactionPooling)
                    .build(); // migrates
            clear(ds);
            for (int i = 0; i < workers; i++) {
                processes.add(null);
                startWorker(i, url);
            }
            long start = System.nanoTime();
            Thread enqueueing = new Thread(() -> enqueue(client), "patroni-enqueuer");
            enqueueing.start();
            long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (succeeded(ds) < 20 && System.nanoTime() < warm) {
                Thread.sleep(100); // the fault strikes once the workers are up and working
            }
            strike(report);
            enqueueing.join(TimeUnit.MINUTES.toMillis(5));
            log("enqueued " + acknowledged.size() + " (" + failedCalls.get() + " failed calls retried); draining");
            long drainDeadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (open(ds) > 0 && System.nanoTime() < drainDeadline) {
                respawn(url);
                Thread.sleep(200);
            }
            report.put("runSeconds", TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
            stopWorkers();
            client.close();
            report.putAll(Checker.check(ds, attempted, acknowledged));
            report.put("idsReissued", idsReissued(ds));
            report.put("tokensReissued", tokensReissued());
            report.put("enqueueFailedCalls", failedCalls.get());
            report.put("respawns", respawns);
        } finally {
            for (Process p : processes) {
                if (p != null) {
                    p.destroyForcibly();
                }
            }
        }
        log("report " + report);
        return report;
    }

    private void strike(Map<String, Long> report) throws Exception {
        Member leader = cluster.leader().orElseThrow(() -> new IllegalStateException("no leader"));
        List<Long> senders = new ArrayList<>();
        if (!synchronous && !lag.isZero() && fault != Fault.SWITCHOVER) {
            senders.addAll(cluster.walSenders(leader));
            log("WAL senders " + senders + " stopped for " + lag.toMillis() + " ms before the fault");
            PatroniCluster.signal("STOP", senders);
            Thread.sleep(lag.toMillis());
        }
        Instant failedAt = Instant.now();
        long failed = System.nanoTime();
        log(fault + " of the leader " + leader.name());
        List<Long> stopped = List.of();
        switch (fault) {
            case KILL9 -> {
                long pm = cluster.postmaster(leader);
                List<Long> children = ProcessHandle.of(pm)
                        .map(p -> p.children().map(ProcessHandle::pid).toList())
                        .orElse(List.of());
                PatroniCluster.signal("KILL", List.of(pm));
                // its backends should exit on noticing the postmaster's death; those that still run
                // after 2 s hold its shared memory, so that Patroni cannot start it again: killed too
                Thread.sleep(2_000);
                List<Long> left = children.stream()
                        .filter(c ->
                                ProcessHandle.of(c).map(ProcessHandle::isAlive).orElse(false))
                        .toList();
                report.put(
                        "backendsLeftAfterKill",
                        left.stream().filter(c -> !senders.contains(c)).count());
                PatroniCluster.signal("KILL", left); // with the stopped WAL senders: what they held is lost
            }
            case STOP -> {
                stopped = cluster.hostProcesses(leader);
                PatroniCluster.signal("STOP", stopped);
            }
            case SWITCHOVER -> {
                Member candidate = cluster.members().stream()
                        .filter(m -> !m.equals(leader))
                        .findFirst()
                        .orElseThrow();
                // patronictl may give up (a candidate not yet ready): asked again, three times at most
                for (int i = 0;
                        i < 3 && !cluster.leader().filter(candidate::equals).isPresent();
                        i++) {
                    cluster.switchover(leader, candidate);
                    long wait = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                    while (System.nanoTime() < wait
                            && !cluster.leader().filter(candidate::equals).isPresent()) {
                        Thread.sleep(200);
                    }
                }
            }
        }
        // polled from the failure on, on every member but a stopped one (whose connections would hang)
        java.util.concurrent.atomic.AtomicReference<Member> stoppedMember =
                new java.util.concurrent.atomic.AtomicReference<>(fault == Fault.STOP ? leader : null);
        java.util.concurrent.CompletableFuture<Optional<Long>> first =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        return firstCompletionAfter(failedAt, failed, Duration.ofSeconds(120), stoppedMember);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return Optional.empty();
                    }
                });
        PatroniCluster.await(
                "another leader",
                Duration.ofSeconds(90),
                () -> cluster.leader().filter(m -> !m.equals(leader)).isPresent());
        report.put("newLeaderMs", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failed));
        if (fault == Fault.STOP) {
            Thread.sleep(2_000); // the new leader serves while the old one is still stopped
            long resumed = System.nanoTime();
            PatroniCluster.signal("CONT", stopped);
            stoppedMember.set(null);
            log("SIGCONT of " + leader.name());
            // one leader again, the other member in recovery: normally the old leader is demoted, but
            // its Patroni may write the leader key back from the view it had when stopped
            PatroniCluster.await("one leader after " + leader.name() + " resumed", Duration.ofSeconds(90), () -> {
                Optional<Member> now = cluster.leader();
                return now.isPresent()
                        && cluster.members().stream()
                                .filter(m -> !m.equals(now.get()))
                                .allMatch(cluster::inRecovery);
            });
            long settledMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumed);
            boolean reclaimed = cluster.leader().map(leader::equals).orElse(false);
            report.put("oldLeaderReclaimed", reclaimed ? 1L : 0L);
            report.put(reclaimed ? "newLeaderDemotedMs" : "oldLeaderFencedMs", settledMs);
            if (reclaimed) {
                log("the old leader " + leader.name() + " took the leader key back after SIGCONT; the member"
                        + " promoted meanwhile was demoted and rewound");
            }
        }
        long firstMs = first.get().orElse(-1L);
        report.put("firstCompletionMs", firstMs);
        log("new leader after " + report.get("newLeaderMs") + " ms, first completion after " + firstMs + " ms");
    }

    /** Enqueues {@code chaos-0..} in batches of 10 over {@link #spread}, each batch retried until acknowledged. */
    private void enqueue(DbTasks client) {
        int batch = 10;
        long pauseNanos = spread.toNanos() / Math.max(1, (tasks + batch - 1) / batch);
        long next = System.nanoTime();
        try {
            for (int from = 0; from < tasks; from += batch) {
                List<TaskRequest> requests = new ArrayList<>();
                for (int i = from; i < Math.min(tasks, from + batch); i++) {
                    String key = "chaos-" + i;
                    attempted.add(key);
                    requests.add(TaskRequest.builder(i % 2 == 0 ? ChaosSchema.TX_KIND : ChaosSchema.PLAIN_KIND)
                            .queue(ChaosSchema.QUEUE)
                            .idempotencyKey(key)
                            .maxAttempts(50)
                            .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(200)))
                            .build());
                }
                while (true) {
                    try {
                        List<EnqueueResult> results = client.enqueueAll(requests);
                        for (EnqueueResult r : results) {
                            acknowledgedIds.putIfAbsent(
                                    r.task().idempotencyKey(), r.task().id());
                            acknowledged.add(r.task().idempotencyKey());
                        }
                        break;
                    } catch (RuntimeException e) {
                        failedCalls.incrementAndGet();
                        Thread.sleep(200);
                    }
                }
                next += pauseNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return acknowledged ids that now name a task of another key */
    private long idsReissued(HikariDataSource ds) throws SQLException {
        Map<Long, String> keyById = new HashMap<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "SELECT id, idempotency_key FROM dbtasks_task WHERE queue = '" + ChaosSchema.QUEUE + "'")) {
            while (rs.next()) {
                keyById.put(rs.getLong(1), rs.getString(2));
            }
        }
        return acknowledgedIds.entrySet().stream()
                .filter(e -> {
                    String now = keyById.get(e.getValue());
                    return now != null && !now.equals(e.getKey());
                })
                .count();
    }

    /** @return fencing tokens a handler was given for two different tasks (id or key), per the RAN lines */
    private long tokensReissued() throws IOException {
        Map<Long, Set<String>> tasksByToken = new HashMap<>();
        try (var logs = Files.list(logDir)) {
            for (Path log : logs.toList()) {
                for (String line : Files.readAllLines(log)) {
                    if (line.startsWith("RAN ")) {
                        String[] f = line.split(" ");
                        if (f.length == 4) {
                            tasksByToken
                                    .computeIfAbsent(Long.parseLong(f[2]), t -> new HashSet<>())
                                    .add(f[1] + " " + f[3]);
                        }
                    }
                }
            }
        }
        return tasksByToken.values().stream().filter(s -> s.size() > 1).count();
    }

    /**
     * Polls every 50 ms, on each member's own URL but the one {@code skip} holds (a stopped host,
     * until it resumes), until a member out of recovery shows a task finished after {@code failedAt}.
     */
    private Optional<Long> firstCompletionAfter(
            Instant failedAt, long failed, Duration timeout, java.util.concurrent.atomic.AtomicReference<Member> skip)
            throws InterruptedException {
        long deadline = failed + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            for (Member m : cluster.members()) {
                if (m.equals(skip.get())) {
                    continue;
                }
                try (Connection c = DriverManager.getConnection(cluster.url(m, "chaos"));
                        PreparedStatement ps = c.prepareStatement(
                                "SELECT NOT pg_is_in_recovery() AND EXISTS (SELECT"
                                        + " 1 FROM dbtasks_task WHERE queue = ? AND status = 'SUCCEEDED' AND finished_at > ?)")) {
                    ps.setString(1, ChaosSchema.QUEUE);
                    ps.setTimestamp(2, Timestamp.from(failedAt));
                    try (ResultSet rs = ps.executeQuery()) {
                        if (rs.next() && rs.getBoolean(1)) {
                            return Optional.of(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failed));
                        }
                    }
                } catch (SQLException e) {
                    // down, stopped or starting: the next member
                }
            }
            Thread.sleep(50);
        }
        return Optional.empty();
    }

    private static long succeeded(HikariDataSource ds) {
        try {
            return Checker.succeeded(ds);
        } catch (SQLException e) {
            return 0;
        }
    }

    private static long open(HikariDataSource ds) {
        try {
            return Checker.open(ds);
        } catch (SQLException e) {
            return Long.MAX_VALUE;
        }
    }

    private void respawn(String url) throws IOException {
        for (int i = 0; i < processes.size(); i++) {
            if (!processes.get(i).isAlive()) {
                log("worker " + i + " exited with " + processes.get(i).exitValue() + "; starting a replacement");
                respawns++;
                startWorker(i, url);
            }
        }
    }

    private void startWorker(int slot, String url) throws IOException {
        String id = name + "-w" + slot + "-g" + (generation++);
        String classpath = ChaosFixtures.classpath();
        String java = ChaosFixtures.java();
        processes.set(
                slot,
                new ProcessBuilder(
                                java,
                                "-Xmx160m",
                                "-XX:+UseSerialGC",
                                "-XX:TieredStopAtLevel=1",
                                "-cp",
                                classpath,
                                ChaosWorker.class.getName(),
                                url,
                                id,
                                "6",
                                String.valueOf(lease.toMillis()),
                                String.valueOf(transactionPooling))
                        .redirectErrorStream(true)
                        .redirectOutput(logDir.resolve(id + ".log").toFile())
                        .start());
    }

    private void stopWorkers() throws InterruptedException {
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

    private static void clear(HikariDataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            for (String t : List.of("dbtasks_attempt", "dbtasks_task", "dbtasks_lock", "dbtasks_lock_waiter")) {
                s.executeUpdate("DELETE FROM " + t);
            }
        }
    }

    private void log(String message) {
        System.out.println("chaos[" + name + "] " + Instant.now() + " " + message);
    }
}
