package io.dbtasks.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskRequest;
import io.dbtasks.limit.Limit;
import io.dbtasks.testing.OwnPostgres;
import io.dbtasks.testing.TcpProxy;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One chaos run: {@code workers} {@link ChaosWorker} processes, each reaching the database through a
 * {@link TcpProxy} of its own in this JVM (so its network can be cut), an {@link Enqueuer} in this
 * JVM, faults injected one after another in turn until each kind has struck {@code faultsPerKind}
 * times, a drain, and the {@link Checker}. With {@link #limitKeys} it is the limits workload: every
 * task transactional with one of a few concurrency keys limited to 1 RUNNING at once, checked by
 * the {@link LimitChecker} as well.
 */
final class ChaosRun {
    enum Fault {
        /** {@code kill -9} of a random worker holding tasks; a replacement starts at once. */
        KILL9,
        /** {@code SIGSTOP} of a random worker holding tasks for lease + 2 s, then {@code SIGCONT}. */
        STOP,
        /** Every other connection to the database terminated (pg_terminate_backend / KILL). */
        TERMINATE,
        /** The database crashes and restarts ({@code pg_ctl restart -m immediate}); own PostgreSQL only. */
        RESTART,
        /** A random worker's TCP proxy cuts every connection and refuses new ones for lease + 2 s. */
        PARTITION,
        /** kill -9 of the primary's postmaster, then promotion of the synchronous standby. */
        FAILOVER;

        /** The faults of a run on one server of the run's own. */
        static final List<Fault> ONE_SERVER = List.of(KILL9, STOP, TERMINATE, RESTART, PARTITION);
    }

    private final String name;
    private final String url;
    private final OwnPostgres ownPostgres;
    private final int tasks;
    private final int workers;
    private final int faultsPerKind;
    private final List<Fault> kinds;
    private final Duration lease = Duration.ofSeconds(3);
    private final Random random;
    private final Path logDir;
    private final List<Slot> slots = new ArrayList<>();
    private final Map<Fault, Integer> struck = new EnumMap<>(Fault.class);
    private final List<Long> restartRecoveriesMs = new ArrayList<>();
    private final Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    private final Set<String> attempted = ConcurrentHashMap.newKeySet();
    private int generation;
    private Boolean transactionPooling = false;
    private String proxyAddressBase;
    private DeadlockCounter deadlocks;
    private final Map<Fault, Long> deadlocksInWindow = new EnumMap<>(Fault.class);
    private StandbyPair standbyPair;
    private final List<Long> failoverRecoveriesMs = new ArrayList<>();
    private long respawns;
    /** The workflow workload instead of the task workload: workflows, steps each (0: tasks). */
    private int workflows;

    private int stepsPerWorkflow;
    private int limitKeys;

    /**
     * @param name a label for the logs and the report
     * @param url the database's direct JDBC URL
     * @param ownPostgres the run's own PostgreSQL if {@code url} is on it (for RESTART), else null
     */
    ChaosRun(
            String name,
            String url,
            OwnPostgres ownPostgres,
            int tasks,
            int workers,
            int faultsPerKind,
            List<Fault> kinds)
            throws IOException {
        this.name = name;
        this.url = url;
        this.ownPostgres = ownPostgres;
        this.tasks = tasks;
        this.workers = workers;
        this.faultsPerKind = faultsPerKind;
        this.kinds = kinds;
        long seed = System.nanoTime();
        this.random = new Random(seed);
        this.logDir = Path.of("target", "chaos", name);
        Files.createDirectories(logDir);
        try (var old = Files.list(logDir)) {
            for (Path p : old.toList()) {
                Files.deleteIfExists(p); // the logs of an earlier run
            }
        }
        log("seed " + seed + ", logs in " + logDir.toAbsolutePath());
    }

    /**
     * @param value whether the workers are behind a transaction pooler, as the workers declare it;
     *     null: not declared, the engine detects it
     * @return this
     */
    ChaosRun transactionPooling(Boolean value) {
        this.transactionPooling = value;
        return this;
    }

    /**
     * Puts each worker's TCP proxy on the URL's own port, on the loopback addresses from {@code
     * base}.3 on ({@code 127.0.0} gives 127.0.0.3, 127.0.0.4, ...), so that the workers' URLs carry
     * the same port number as the database's (by default each proxy has a free port on 127.0.0.1).
     *
     * @param base the first three octets of a loopback address
     * @return this
     */
    ChaosRun proxiesOnTheSamePort(String base) {
        this.proxyAddressBase = base;
        return this;
    }

    /**
     * Runs the workflow workload instead of the task workload: {@code count} workflows of {@code
     * steps} steps with random dependencies ({@link WorkflowEnqueuer}), checked by the {@link
     * WorkflowChecker}; the run's {@code tasks} is not used.
     *
     * @param count workflows
     * @param steps steps per workflow
     * @return this
     */
    ChaosRun workflows(int count, int steps) {
        this.workflows = count;
        this.stepsPerWorkflow = steps;
        return this;
    }

    /**
     * @param pair the primary and standby behind a multi-host {@code url}, for FAILOVER
     * @return this
     */
    ChaosRun standbyPair(StandbyPair pair) {
        this.standbyPair = pair;
        return this;
    }

    /**
     * Makes it the limits workload: every task transactional, over {@code keys} concurrency keys
     * ({@code key-0}, {@code key-1}, ...) with a limit of 1 RUNNING at once each, set before the
     * workers start; the workers record each run's interval and the report adds the {@link
     * LimitChecker}'s figures.
     *
     * @param keys how many keys, at least 1
     * @return this
     */
    ChaosRun limitKeys(int keys) {
        this.limitKeys = keys;
        return this;
    }

    /** A worker's place: its proxy stays, its process is replaced after a kill. */
    private static final class Slot {
        final TcpProxy proxy;
        Process process;
        String id;

        Slot(TcpProxy proxy) {
            this.proxy = proxy;
        }
    }

    /**
     * Runs it.
     *
     * @param outages outage lengths to measure after the drain (own PostgreSQL only), seconds
     * @return the figures: the checker's, faults per kind, times
     */
    Map<String, Long> run(List<Integer> outages) throws Exception {
        Map<String, Long> report = new LinkedHashMap<>();
        try (HikariDataSource ds = pool(url, 6)) {
            ChaosSchema.recreate(ds);
            DbTasks client = DbTasks.builder(ds).workers(false).build(); // migrates
            clear(ds);
            if (limitKeys > 0) {
                client.limits().set(Limit.maxRunning(ChaosSchema.QUEUE, Limit.EVERY_KEY, 1));
            }
            URI target = url.contains(",") ? null : URI.create(url.substring("jdbc:".length()));
            deadlocks = new DeadlockCounter(directUrl(), name);
            for (int i = 0; i < workers; i++) {
                // a multi-host URL (failover) is used as it is: no proxy, no PARTITION
                Slot s = new Slot(
                        url.contains(",")
                                ? null
                                : proxyAddressBase == null
                                        ? new TcpProxy(target.getHost(), target.getPort())
                                        : new TcpProxy(
                                                target.getHost(),
                                                target.getPort(),
                                                InetAddress.getByName(proxyAddressBase + "." + (3 + i)),
                                                target.getPort()));
                slots.add(s);
                startWorker(s);
            }
            long start = System.nanoTime();
            Enqueuer enqueuer = new Enqueuer(client, acknowledged, limitKeys);
            WorkflowEnqueuer workflowEnqueuer = new WorkflowEnqueuer(client, ds, acknowledged, random.nextLong());
            for (int i = 0; i < tasks && workflows == 0; i++) {
                attempted.add("chaos-" + i);
            }
            Duration spread = Duration.ofSeconds(Math.max(20, (long) faultsPerKind * kinds.size() * 4L));
            Thread enqueueing = new Thread(
                    () -> {
                        try {
                            if (workflows > 0) {
                                workflowEnqueuer.run(workflows, stepsPerWorkflow, spread);
                            } else {
                                enqueuer.run(tasks, 50, spread);
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "chaos-enqueuer");
            enqueueing.start();
            long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (Checker.succeeded(ds) < 20 && System.nanoTime() < warm) {
                Thread.sleep(100); // faults strike once the workers are up and working
            }
            long deadlocksBeforeFaults = deadlocks.sample();
            injectFaults(ds);
            long faultsDone = System.nanoTime();
            long deadlocksAfterFaultsStart = deadlocks.sample();
            enqueueing.join(TimeUnit.MINUTES.toMillis(10));
            log("enqueued " + acknowledged.size() + (workflows > 0 ? " workflows" : "") + " ("
                    + (enqueuer.failedCalls() + workflowEnqueuer.failedCalls()) + " failed calls retried); draining");
            long drainDeadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            while (open(ds) > 0 && System.nanoTime() < drainDeadline) {
                respawn();
                Thread.sleep(200);
            }
            long drained = System.nanoTime();
            report.put("runSeconds", TimeUnit.NANOSECONDS.toSeconds(drained - start));
            report.put("drainAfterFaultsMs", TimeUnit.NANOSECONDS.toMillis(drained - faultsDone));
            long deadlocksDrained = deadlocks.sample();
            Map<Integer, List<Long>> byLength = new LinkedHashMap<>();
            for (int i = 0; i < outages.size(); i++) {
                int seconds = outages.get(i);
                String key = "recoveryAfter" + seconds + "sOutage" + (i == 0 ? "" : "#" + (i + 1)) + "Ms";
                long ms = outage(client, ds, seconds, i);
                report.put(key, ms);
                if (ms >= 0) {
                    byLength.computeIfAbsent(seconds, k -> new ArrayList<>()).add(ms);
                }
            }
            byLength.forEach((seconds, times) -> {
                if (times.size() > 1) {
                    spread(report, "recoveryAfter" + seconds + "sOutage", times);
                }
            });
            if (!outages.isEmpty()) {
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                while (open(ds) > 0 && System.nanoTime() < deadline) {
                    respawn();
                    Thread.sleep(200);
                }
            }
            stopWorkers();
            client.close();
            Thread.sleep(1_500); // PostgreSQL flushes a backend's statistics at most once a second
            long deadlocksTotal = deadlocks.sample();
            report.put("deadlocks", deadlocks.available() ? deadlocksTotal : -1L);
            report.put("deadlocksBeforeFaults", deadlocksBeforeFaults);
            for (Fault f : kinds) {
                report.put("deadlocksInWindow" + f, deadlocksInWindow.getOrDefault(f, 0L));
            }
            report.put("deadlocksInDrain", deadlocksDrained - deadlocksAfterFaultsStart);
            report.put("deadlocksInOutages", deadlocksTotal - deadlocksDrained);
            if (ownPostgres != null) {
                report.put("deadlocksInServerLog", ownPostgres.logLinesContaining("deadlock detected"));
            }
            report.putAll(
                    workflows > 0
                            ? WorkflowChecker.check(ds, acknowledged, stepsPerWorkflow)
                            : Checker.check(ds, attempted, acknowledged));
            if (limitKeys > 0) {
                report.putAll(LimitChecker.check(ds));
            }
        } finally {
            if (deadlocks != null) {
                deadlocks.close();
            }
            for (Slot s : slots) {
                if (s.process != null) {
                    s.process.destroyForcibly();
                }
                if (s.proxy != null) {
                    s.proxy.close();
                }
            }
        }
        report.put("workers", (long) workers);
        report.put("respawns", respawns);
        for (Fault f : kinds) {
            report.put("faults" + f, (long) struck.getOrDefault(f, 0));
        }
        if (!failoverRecoveriesMs.isEmpty()) {
            report.put("failoverRecoveryMs", failoverRecoveriesMs.get(0));
        }
        if (kinds.contains(Fault.RESTART)) {
            report.put("restartsWithoutCompletionIn60s", (long)
                    (struck.getOrDefault(Fault.RESTART, 0) - restartRecoveriesMs.size()));
        }
        if (!restartRecoveriesMs.isEmpty()) {
            log("resume after each restart (ms): " + restartRecoveriesMs);
            spread(report, "restartRecovery", restartRecoveriesMs);
        }
        log("report " + report);
        return report;
    }

    /** Puts the median, the least and the greatest of {@code times} under {@code prefix}*{@code Ms}. */
    private static void spread(Map<String, Long> report, String prefix, List<Long> times) {
        List<Long> sorted = times.stream().sorted().toList();
        int n = sorted.size();
        report.put(
                prefix + "MedianMs", n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2);
        report.put(prefix + "MinMs", sorted.get(0));
        report.put(prefix + "MaxMs", sorted.get(n - 1));
    }

    /**
     * @return the run's database without proxy or pooler: the own PostgreSQL's address for a URL
     *     through PgBouncer, else the URL itself
     */
    private String directUrl() {
        return ownPostgres == null ? url : url.replaceFirst("//[^/]+/", "//127.0.0.1:" + ownPostgres.port() + "/");
    }

    /**
     * Strikes the faults in turn; the deadlocks counted from one strike to the next are put down to
     * the first (a rough attribution: a fault's rescues come a lease later, in the next window).
     */
    private void injectFaults(HikariDataSource ds) throws Exception {
        int round = 0;
        while (round < faultsPerKind) {
            for (Fault f : kinds) {
                respawn();
                long before = deadlocks.sample();
                strike(f, ds);
                struck.merge(f, 1, Integer::sum);
                Thread.sleep(1_000 + random.nextInt(1_000));
                deadlocksInWindow.merge(f, deadlocks.sample() - before, Long::sum);
            }
            round++;
        }
    }

    private void strike(Fault fault, HikariDataSource ds) throws Exception {
        Slot slot = fault == Fault.KILL9 || fault == Fault.STOP ? holder(ds) : slots.get(random.nextInt(slots.size()));
        log(fault + (fault == Fault.TERMINATE || fault == Fault.RESTART ? "" : " " + slot.id));
        switch (fault) {
            case KILL9 -> {
                slot.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                startWorker(slot);
            }
            case STOP -> {
                signal(slot.process, "STOP");
                Thread.sleep(lease.toMillis() + 2_000);
                signal(slot.process, "CONT");
            }
            case TERMINATE -> terminateBackends();
            case RESTART -> {
                long before = Checker.succeeded(ds);
                deadlocks.sample(); // the crash resets the server's counter
                ownPostgres.stop("immediate");
                ownPostgres.startServer();
                long back = System.nanoTime();
                Long ms = firstCompletionAfter(ds, before, back, Duration.ofSeconds(60));
                if (ms != null) {
                    restartRecoveriesMs.add(ms);
                }
            }
            case FAILOVER -> {
                long before = Checker.succeeded(ds);
                deadlocks.sample(); // the new primary has a counter of its own
                standbyPair.crashPrimary();
                standbyPair.promote();
                long promoted = System.nanoTime();
                Long ms = firstCompletionAfter(ds, before, promoted, Duration.ofSeconds(120));
                log("first completion " + ms + " ms after the standby's promotion");
                failoverRecoveriesMs.add(ms == null ? -1 : ms);
            }
            case PARTITION -> {
                slot.proxy.cut();
                Thread.sleep(lease.toMillis() + 2_000);
                slot.proxy.restore();
            }
        }
    }

    /**
     * @return a random worker among those holding RUNNING chaos tasks, so that the fault strikes
     *     tasks in flight (and in the limits workload a key's one run); any worker if none does
     */
    private Slot holder(HikariDataSource ds) {
        List<Slot> holding = new ArrayList<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT DISTINCT lease_owner FROM dbtasks_task WHERE queue = '"
                        + ChaosSchema.QUEUE + "' AND status = 'RUNNING'")) {
            Set<String> owners = new java.util.HashSet<>();
            while (rs.next()) {
                owners.add(rs.getString(1));
            }
            for (Slot s2 : slots) {
                if (owners.contains(s2.id)) {
                    holding.add(s2);
                }
            }
        } catch (SQLException e) {
            // the database cannot answer now: any worker
        }
        List<Slot> from = holding.isEmpty() ? slots : holding;
        return from.get(random.nextInt(from.size()));
    }

    /**
     * An outage of {@code seconds} of the own PostgreSQL with tasks due during it.
     *
     * @return milliseconds from the database accepting connections again to the first task
     *     completed after it
     */
    private long outage(DbTasks client, HikariDataSource ds, int seconds, int index) throws Exception {
        List<TaskRequest> due = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            String key = "outage-" + index + "-" + i;
            attempted.add(key);
            due.add(TaskRequest.builder(i % 2 == 0 ? ChaosSchema.TX_KIND : ChaosSchema.PLAIN_KIND)
                    .queue(ChaosSchema.QUEUE)
                    .idempotencyKey(key)
                    .maxAttempts(50)
                    .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(200)))
                    .runAt(Instant.now().plusSeconds(Math.min(3, seconds)))
                    .build());
        }
        client.enqueueAll(due);
        due.forEach(r -> acknowledged.add(r.idempotencyKey()));
        long before = Checker.succeeded(ds);
        deadlocks.sample(); // the crash resets the server's counter
        ownPostgres.stop("immediate");
        log("outage of " + seconds + " s");
        Thread.sleep(seconds * 1_000L);
        ownPostgres.startServer();
        long back = System.nanoTime();
        Long ms = firstCompletionAfter(ds, before, back, Duration.ofSeconds(120));
        log("first completion " + ms + " ms after the database came back from a " + seconds + " s outage");
        return ms == null ? -1 : ms;
    }

    /**
     * Polls every 20 ms (own connections to the database, not the pool, not through a pooler) until
     * more than {@code before} succeeded.
     */
    private Long firstCompletionAfter(HikariDataSource ds, long before, long back, Duration timeout)
            throws InterruptedException {
        long deadline = back + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            try (Connection c = DriverManager.getConnection(directUrl());
                    Statement s = c.createStatement()) {
                while (System.nanoTime() < deadline) {
                    if (Checker.one(
                                    s,
                                    "SELECT COUNT(*) FROM dbtasks_task WHERE queue = '" + ChaosSchema.QUEUE
                                            + "' AND status = 'SUCCEEDED'")
                            > before) {
                        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back);
                    }
                    Thread.sleep(20);
                }
            } catch (SQLException e) {
                Thread.sleep(20);
            }
        }
        return null;
    }

    private void terminateBackends() throws SQLException, InterruptedException {
        try (Connection c = connectForFault();
                Statement s = c.createStatement()) {
            if (url.startsWith("jdbc:postgresql:")) {
                try (ResultSet rs = s.executeQuery("SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity"
                        + " WHERE datname = current_database() AND pid <> pg_backend_pid()")) {
                    rs.next();
                    log("terminated " + rs.getLong(1) + " backends");
                }
            } else {
                List<Long> ids = new ArrayList<>();
                try (ResultSet rs = s.executeQuery("SELECT ID FROM information_schema.PROCESSLIST"
                        + " WHERE DB = DATABASE() AND ID <> CONNECTION_ID()")) {
                    while (rs.next()) {
                        ids.add(rs.getLong(1));
                    }
                }
                int killed = 0;
                for (long id : ids) {
                    try {
                        s.execute("KILL CONNECTION " + id);
                        killed++;
                    } catch (SQLException gone) {
                        // ended meanwhile
                    }
                }
                log("killed " + killed + " connections");
            }
        }
    }

    /**
     * A connection of the fault's own, tried for up to 10 s: on a server shared with other clients
     * its connection slots may all be taken for a moment, which is no reason to fail the run.
     */
    private Connection connectForFault() throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                return DriverManager.getConnection(url);
            } catch (SQLException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                log("cannot connect to strike (" + e.getMessage() + "); again in 500 ms");
                Thread.sleep(500);
            }
        }
    }

    /** @return open tasks, or a large number while the database cannot answer */
    private static long open(HikariDataSource ds) {
        try {
            return Checker.open(ds);
        } catch (SQLException e) {
            return Long.MAX_VALUE;
        }
    }

    /** Starts a replacement for any worker that exited by itself (counted as {@code respawns}). */
    private void respawn() throws IOException {
        for (Slot s : slots) {
            if (!s.process.isAlive()) {
                log(s.id + " exited with " + s.process.exitValue() + "; starting a replacement");
                respawns++;
                startWorker(s);
            }
        }
    }

    private void startWorker(Slot slot) throws IOException {
        slot.id = "chaos-" + name + "-w" + slots.indexOf(slot) + "-g" + (generation++);
        String classpath = ChaosFixtures.classpath();
        String java = ChaosFixtures.java();
        slot.process = new ProcessBuilder(
                        java,
                        "-Xmx192m",
                        "-XX:+UseSerialGC",
                        "-cp",
                        classpath,
                        ChaosWorker.class.getName(),
                        slot.proxy == null ? url : slot.proxy.rewrite(url),
                        slot.id,
                        "6",
                        String.valueOf(lease.toMillis()),
                        transactionPooling == null ? "detect" : String.valueOf(transactionPooling),
                        limitKeys > 0 ? "intervals" : "")
                .redirectErrorStream(true)
                .redirectOutput(logDir.resolve(slot.id + ".log").toFile())
                .start();
    }

    private void stopWorkers() throws InterruptedException {
        for (Slot s : slots) {
            try {
                OutputStream in = s.process.getOutputStream();
                in.write("STOP\n".getBytes(StandardCharsets.UTF_8));
                in.flush();
            } catch (IOException gone) {
                // already gone
            }
        }
        for (Slot s : slots) {
            if (!s.process.waitFor(30, TimeUnit.SECONDS)) {
                s.process.destroyForcibly();
            }
        }
    }

    private static void signal(Process p, String signal) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + signal, String.valueOf(p.pid()))
                .inheritIO()
                .start()
                .waitFor(10, TimeUnit.SECONDS);
    }

    private static void clear(HikariDataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            for (String t : List.of(
                    "dbtasks_attempt",
                    "dbtasks_task",
                    "dbtasks_task_key",
                    "dbtasks_dependency",
                    "dbtasks_workflow",
                    "dbtasks_lock",
                    "dbtasks_lock_waiter",
                    "dbtasks_limit",
                    "dbtasks_queue_rate",
                    "dbtasks_concurrency_key",
                    "dbtasks_history_count",
                    "dbtasks_history_hour")) {
                s.executeUpdate("DELETE FROM " + t);
            }
        }
    }

    static HikariDataSource pool(String url, int size) {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(url);
        hc.setMaximumPoolSize(size);
        hc.setConnectionTimeout(5_000);
        hc.setInitializationFailTimeout(-1);
        return new HikariDataSource(hc);
    }

    private void log(String message) {
        System.out.println("chaos[" + name + "] " + Instant.now() + " " + message);
    }
}
