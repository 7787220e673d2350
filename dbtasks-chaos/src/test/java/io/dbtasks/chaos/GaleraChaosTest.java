package io.dbtasks.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.internal.dialect.Dialects;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * dbtasks on a three-node MariaDB Galera cluster of the run's own ({@link GaleraCluster}), engines on
 * different nodes: the schema migrates and tokens drawn on any node increase; the chaos run with a
 * node killed and restarted (IST) loses no task and doubles no transactional effect; the burn-down
 * on three nodes against one; the lock workload with its two processes on two nodes. Sizes: {@code
 * -Dchaos.galera.tasks}, {@code .kills}, {@code .burn}, {@code .runs}, {@code .lock.seconds} (the
 * build's CI size by default, {@code run-chaos.sh} passes the full one); and run-once guards raced
 * from two nodes. Skipped with the reason
 * where the binaries are missing, or when MariaDB is not in {@code dbtasks.test.databases}.
 *
 * <p>Each test starts on a whole cluster (a node an earlier test left down is started again, else the
 * cluster anew) and its pools fail a call on a node that is down within seconds ({@link
 * GaleraRun#pool}); each has a time limit of about three times its time at the build's size, so
 * that a test that still waits on a dead node fails instead of holding up the build ({@code
 * run-chaos.sh}, at its larger sizes, runs without the limits).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GaleraChaosTest {
    private static final int TASKS = Integer.getInteger("chaos.galera.tasks", 600);
    private static final int KILLS = Integer.getInteger("chaos.galera.kills", 1);
    private static final int BURN = Integer.getInteger("chaos.galera.burn", 800);
    /** Calls of one caller for one key in the run-once race, the first included. */
    private static final int CALLS_PER_KEY = 10;

    private static final int RUNS = Integer.getInteger("chaos.galera.runs", 1);
    private static final int LOCK_SECONDS = Integer.getInteger("chaos.galera.lock.seconds", 30);

    private static GaleraCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        Assumptions.assumeTrue(TestDatabase.MARIADB.required(), "mariadb is not in dbtasks.test.databases");
        var reason = GaleraCluster.unavailable();
        if (reason.isPresent()) {
            String why = reason.get() + ": the Galera chaos runs are skipped";
            System.out.println("chaos: " + why);
            Assumptions.abort(why);
        }
        cluster = GaleraCluster.start(3, "chaos");
    }

    /**
     * Every node up and joined before each test: one that an earlier test killed and that did not
     * come back is started again, else the cluster is started anew ({@link GaleraCluster#whole}).
     */
    @BeforeEach
    void wholeCluster() throws Exception {
        cluster = cluster.whole();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * Galera rejects the default cached sequence, and hands the same sequence value to transactions
     * on different nodes: the schema migrates, and tokens drawn as the engine draws them, by threads
     * on every node at once, are all distinct; a second engine on another node finds the schema.
     */
    @Test
    @Order(1)
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void schemaMigratesAndTokensDrawnOnEveryNodeAtOnceAreDistinct() throws Exception {
        try (HikariDataSource ds = GaleraRun.pool(cluster.url(1, "chaos"), 2)) {
            DbTasks.builder(ds).workers(false).build().close();
            try (Connection c = ds.getConnection();
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT SECURITY_TYPE FROM information_schema.ROUTINES"
                            + " WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = 'dbtasks_next_token'")) {
                assertThat(rs.next()).as("the token function exists").isTrue();
                assertThat(rs.getString(1))
                        .as("the token function runs with its caller's privileges")
                        .isEqualTo("INVOKER");
            }
        }
        Set<Long> tokens = ConcurrentHashMap.newKeySet();
        AtomicLong draws = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        for (int t = 0; t < 6; t++) {
            int node = t % cluster.size();
            Thread thread = new Thread(() -> {
                try (HikariDataSource ds = GaleraRun.pool(cluster.url(node, "chaos"), 1)) {
                    String sql = "SELECT " + Dialects.detect(ds).nextToken();
                    try (Connection c = ds.getConnection();
                            Statement s = c.createStatement()) {
                        c.setAutoCommit(false);
                        while (System.nanoTime() < end) {
                            try (ResultSet rs = s.executeQuery(sql)) {
                                rs.next();
                                long token = rs.getLong(1);
                                c.commit();
                                draws.incrementAndGet();
                                assertThat(tokens.add(token))
                                        .as("token %s drawn twice", token)
                                        .isTrue();
                            } catch (SQLException conflict) {
                                c.rollback(); // lost certification: nothing drawn
                            }
                        }
                    }
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(draws.get()).as("committed draws").isPositive().isEqualTo(tokens.size());
        try (HikariDataSource ds = GaleraRun.pool(cluster.url(2, "chaos"), 2)) {
            DbTasks.builder(ds).workers(false).build().close();
        }
    }

    /** Worker processes on every node; a node killed with SIGKILL mid-run and restarted. */
    @Test
    @Order(2)
    @Timeout(value = 150, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void workersOnEveryNodeWithANodeKilledAndRestarted() throws Exception {
        Map<String, Long> r = GaleraRun.chaos(cluster, TASKS, 3, KILLS);
        assertThat(r.get("acknowledged")).as("acknowledged").isGreaterThanOrEqualTo(TASKS);
        assertThat(r.get("lost")).as("lost tasks: %s", r).isZero();
        assertThat(r.get("unexpected")).as("unexpected tasks: %s", r).isZero();
        assertThat(r.get("txDuplicates"))
                .as("duplicate transactional effects: %s", r)
                .isZero();
        assertThat(r.get("txMissing"))
                .as("missing transactional effects: %s", r)
                .isZero();
        assertThat(r.get("txOrphans"))
                .as("transactional effects of unfinished tasks: %s", r)
                .isZero();
        assertThat(r.get("txTokenMismatch"))
                .as("effects under a token not the SUCCEEDED attempt's: %s", r)
                .isZero();
        assertThat(r.get("badSucceededAttempts"))
                .as("SUCCEEDED tasks without exactly one SUCCEEDED attempt: %s", r)
                .isZero();
        assertThat(r.get("repeatedTokens")).as("repeated fencing tokens: %s", r).isZero();
        assertThat(r.get("rejoinedByIst"))
                .as("restarted nodes rejoined by IST: %s", r)
                .isEqualTo((long) KILLS);
        ChaosTest.report("galera (3 nodes, node kill -9 and restart)", r);
    }

    /**
     * The same ready queue worked off by three engines on three nodes, and by three engines on one
     * node; reports throughput and conflicts (medians over {@code chaos.galera.runs}), asserts only
     * that nothing is lost or doubled.
     */
    @Test
    @Order(3)
    @Timeout(value = 40, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void burnDownOnThreeNodesAgainstOne() throws Exception {
        for (boolean spread : new boolean[] {true, false}) {
            List<Map<String, Long>> runs = new ArrayList<>();
            for (int i = 0; i < RUNS; i++) {
                Map<String, Long> r = GaleraRun.burnDown(cluster, spread, BURN, 3, 4);
                assertThat(r.get("lost")).as("lost tasks: %s", r).isZero();
                assertThat(r.get("txDuplicates"))
                        .as("duplicate transactional effects: %s", r)
                        .isZero();
                assertThat(r.get("txMissing"))
                        .as("missing transactional effects: %s", r)
                        .isZero();
                assertThat(r.get("repeatedTokens"))
                        .as("repeated fencing tokens: %s", r)
                        .isZero();
                runs.add(r);
            }
            Map<String, Long> summary = new LinkedHashMap<>();
            summary.put("runs", (long) RUNS);
            summary.put("tasks", (long) BURN);
            for (String key : List.of(
                    "tasksPerSecond",
                    "burnDownMs",
                    "wsrep_local_cert_failures",
                    "wsrep_local_bf_aborts",
                    "Innodb_deadlocks",
                    "engineRollbacks",
                    "failedAttempts",
                    "rescues")) {
                List<Long> values = runs.stream().map(m -> m.get(key)).sorted().toList();
                summary.put(key + "Median", values.get(values.size() / 2));
                summary.put(key + "Min", values.get(0));
                summary.put(key + "Max", values.get(values.size() - 1));
            }
            System.out.println("chaos[galera] burn-down " + (spread ? "three nodes" : "one node") + " " + summary);
            ChaosTest.report(
                    "galera burn-down, 3 engines x 4 handlers on " + (spread ? "three nodes" : "one node"), summary);
        }
    }

    /** The lock workload with one process on node 1 and the other on node 2. */
    @Test
    @Order(4)
    @Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void leaseLocksWithProcessesOnTwoNodes() throws Exception {
        GaleraRun.reset(cluster);
        Map<String, Long> r = LockRun.run(
                cluster.url(0, "chaos") + "&sessionVariables=wsrep_sync_wait=1",
                List.of(cluster.url(0, "chaos"), cluster.url(1, "chaos")),
                LOCK_SECONDS);
        assertThat(r.get("pauses")).as("pauses").isPositive();
        assertThat(r.get("counter")).as("counter = accepted increments: %s", r).isEqualTo(r.get("accepted"));
        assertThat(r.get("history")).as("history rows: %s", r).isEqualTo(r.get("accepted"));
        assertThat(r.get("acceptedLogged")).as("logged accepted: %s", r).isEqualTo(r.get("accepted"));
        assertThat(r.get("orderBreaks")).as("tokens out of commit order: %s", r).isZero();
        assertThat(r.get("takeovers")).as("takeovers happened: %s", r).isPositive();
        assertThat(r.get("unreported"))
                .as("takeovers withLock did not report: %s", r)
                .isZero();
        ChaosTest.report("locks galera (processes on two nodes)", r);
    }

    /**
     * Run-once guards raced from two nodes: an engine on node 1 and one on node 2, four threads each,
     * every thread calling {@code runOnce} for the same keys (the second engine in reverse order). Each
     * key's work must have run exactly once. A call whose claim lost certification more often than
     * the engine retries throws (as {@code runOnce} documents for a database failure); those are
     * counted, and the key is still run by one of the other seven callers.
     */
    @Test
    @Order(5)
    @Timeout(value = 15, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void runOnceGuardsRacedFromTwoNodes() throws Exception {
        GaleraRun.reset(cluster);
        int keys = 150;
        try (HikariDataSource ds1 = GaleraRun.pool(cluster.url(0, "chaos"), 6);
                HikariDataSource ds2 = GaleraRun.pool(cluster.url(1, "chaos"), 6);
                HikariDataSource check = GaleraRun.causalPool(cluster.url(0, "chaos"), 1)) {
            try (Connection c = ds1.getConnection();
                    Statement s = c.createStatement()) {
                s.executeUpdate("CREATE TABLE once_effect (id BIGINT AUTO_INCREMENT PRIMARY KEY,"
                        + " once_key VARCHAR(100) NOT NULL, token BIGINT NOT NULL)");
            }
            DbTasks one = DbTasks.builder(ds1)
                    .workerId("once-1")
                    .workers(false)
                    .migrate(false)
                    .build();
            DbTasks two = DbTasks.builder(ds2)
                    .workerId("once-2")
                    .workers(false)
                    .migrate(false)
                    .build();
            AtomicLong ran = new AtomicLong();
            AtomicLong errors = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                boolean first = t % 2 == 0;
                DbTasks engine = first ? one : two;
                HikariDataSource ds = first ? ds1 : ds2;
                Thread thread = new Thread(() -> {
                    for (int i = 0; i < keys; i++) {
                        String key = "race-" + (first ? i : keys - 1 - i);
                        // A call that loses certification more often than the engine retries throws,
                        // having run nothing; its caller calls again, as an application would.
                        for (int call = 1; call <= CALLS_PER_KEY; call++) {
                            try {
                                var r = engine.guards().runOnce(key, Duration.ofSeconds(10), lease -> {
                                    try (Connection c = ds.getConnection();
                                            var ps = c.prepareStatement(
                                                    "INSERT INTO once_effect (once_key, token) VALUES (?, ?)")) {
                                        ps.setString(1, lease.name());
                                        ps.setLong(2, lease.token());
                                        ps.executeUpdate();
                                    }
                                });
                                if (r.ran()) {
                                    ran.incrementAndGet();
                                }
                                break;
                            } catch (io.dbtasks.DbTasksException e) {
                                errors.incrementAndGet();
                                try {
                                    Thread.sleep(java.util.concurrent.ThreadLocalRandom.current()
                                            .nextInt(1, 20));
                                } catch (InterruptedException interrupted) {
                                    Thread.currentThread().interrupt();
                                    return;
                                }
                            }
                        }
                    }
                });
                thread.start();
                threads.add(thread);
            }
            try {
                for (Thread thread : threads) {
                    thread.join(TimeUnit.MINUTES.toMillis(5));
                }
            } finally {
                threads.forEach(Thread::interrupt); // a test that timed out leaves no caller calling
            }
            one.close();
            two.close();
            try (Connection c = check.getConnection();
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery(
                            "SELECT COUNT(*), COUNT(DISTINCT once_key), COUNT(DISTINCT token) FROM once_effect")) {
                rs.next();
                Map<String, Long> r = new LinkedHashMap<>();
                r.put("keys", (long) keys);
                r.put("calls", 8L * keys);
                r.put("ran", ran.get());
                r.put("errors", errors.get());
                r.put("effects", rs.getLong(1));
                r.put("keysRun", rs.getLong(2));
                r.put("distinctTokens", rs.getLong(3));
                System.out.println("chaos[galera] run-once race " + r);
                assertThat(r.get("effects"))
                        .as("no key's work ran twice: %s", r)
                        .isEqualTo(r.get("keysRun"));
                assertThat(r.get("keysRun")).as("every key ran: %s", r).isEqualTo(keys);
                assertThat(r.get("ran"))
                        .as("runOnce reported each run once: %s", r)
                        .isEqualTo(keys);
                assertThat(r.get("distinctTokens")).as("tokens: %s", r).isEqualTo(keys);
                ChaosTest.report("run-once galera (engines on two nodes)", r);
            }
        }
    }
}
