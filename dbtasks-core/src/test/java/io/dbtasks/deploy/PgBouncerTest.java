package io.dbtasks.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.TaskRequest;
import io.dbtasks.testing.LogCapture;
import io.dbtasks.testing.OwnPostgres;
import io.dbtasks.testing.PgBouncer;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The engine behind PgBouncer (Debian's package, started by the test), with the server's plain JDBC
 * URL and pgjdbc's defaults: every acknowledged enqueue is stored and runs once.
 */
class PgBouncerTest {
    private static final int CLIENTS = 8;
    private static final int TASKS = 2000;

    record Payload(int n) {}

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private LogCapture listenerLog;

    @BeforeEach
    void requirements() {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "PostgreSQL is not in dbtasks.test.databases");
        if (PgBouncer.binary().isEmpty()) {
            if (Boolean.getBoolean("dbtasks.test.pgbouncer.required")) {
                throw new IllegalStateException("pgbouncer is required (dbtasks.test.pgbouncer.required) but not"
                        + " installed: apt-get install pgbouncer");
            }
            System.out.println("SKIPPED PgBouncerTest: pgbouncer is not installed (apt-get install pgbouncer)");
            Assumptions.abort("pgbouncer is not installed");
        }
        DbTasks.builder(TestDatabase.POSTGRESQL.dataSource())
                .workers(false)
                .build()
                .close();
        TestDatabase.POSTGRESQL.clear();
        listenerLog = closing(LogCapture.of("io.dbtasks.internal.dialect.PostgresListener"));
    }

    @AfterEach
    void close() throws Exception {
        Collections.reverse(closeables);
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }

    private <T extends AutoCloseable> T closing(T c) {
        closeables.add(c);
        return c;
    }

    private HikariDataSource pool(String url, int size) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setMaximumPoolSize(size);
        c.setConnectionTimeout(10_000);
        return closing(new HikariDataSource(c));
    }

    @Test
    void transactionModeStoresEveryAcknowledgedTaskAndRunsItOnce() throws Exception {
        burn("transaction");
    }

    @Test
    void sessionModeStoresEveryAcknowledgedTaskAndRunsItOnce() throws Exception {
        burn("session");
    }

    /** Declared instead of detected: the same guarantee, and no LISTEN connection is taken at all. */
    @Test
    void declaredTransactionPoolingStoresEveryAcknowledgedTaskWithoutListening() throws Exception {
        burn("transaction", true);
        assertThat(listenerLog.messages())
                .as("listener log lines (no listener is started)")
                .isEmpty();
    }

    @Test
    void crossInstanceEnqueueLatencyBehindTransactionPooling() throws Exception {
        crossInstanceLatency("transaction");
    }

    @Test
    void crossInstanceEnqueueLatencyBehindSessionPooling() throws Exception {
        crossInstanceLatency("session");
    }

    /**
     * 2,000 enqueues from 8 clients over two engines (one works, one only produces), each with its
     * own pool through a PgBouncer with 4 server connections, so transactions of different clients
     * keep changing backends.
     */
    private void burn(String poolMode) throws Exception {
        burn(poolMode, null);
    }

    /** @param transactionPooling as given to the builders; {@code null} to let them detect it */
    private void burn(String poolMode, Boolean transactionPooling) throws Exception {
        PgBouncer bouncer =
                closing(PgBouncer.start(TestDatabase.POSTGRESQL.url(), poolMode, serverConnections(poolMode)));
        burn(bouncer, poolMode, transactionPooling, TestDatabase.POSTGRESQL.dataSource());
    }

    /**
     * PgBouncer in transaction mode on 127.0.0.2 serves the same port number as a PostgreSQL of the
     * test's own on 127.0.0.1, as a sidecar's 5432 in front of the server's 5432 does: nothing in
     * addresses or ports tells the engine that a pooler is there. The database is empty, so both
     * engines' first starts (Flyway's migration included) go through the pooler too.
     */
    @Test
    void samePortTransactionPoolingFromAnEmptyDatabaseStoresEveryAcknowledgedTaskOnce() throws Exception {
        samePortBurn(List.of());
    }

    /**
     * The same with PgBouncer's own prepared-statement support ({@code max_prepared_statements},
     * PgBouncer 1.21 and later), which maps client statement names to server ones.
     */
    @Test
    void samePortTransactionPoolingWithPreparedStatementSupportStoresEveryAcknowledgedTaskOnce() throws Exception {
        int[] v = PgBouncer.version();
        Assumptions.assumeTrue(
                v[0] > 1 || (v[0] == 1 && v[1] >= 21),
                "max_prepared_statements needs PgBouncer 1.21 or later; installed: " + v[0] + "." + v[1]);
        samePortBurn(List.of("max_prepared_statements = 100"));
    }

    private void samePortBurn(List<String> settings) throws Exception {
        OwnPostgres server = closing(OwnPostgres.start(List.of("max_connections=60")));
        server.createDatabase("dbtasks_same_port");
        PgBouncer bouncer = closing(PgBouncer.start(
                server.url("dbtasks_same_port"), "transaction", 4, "127.0.0.2", server.port(), settings));
        HikariConfig direct = new HikariConfig();
        direct.setJdbcUrl(server.url("dbtasks_same_port"));
        direct.setMaximumPoolSize(2);
        burn(bouncer, "transaction (same port)", null, closing(new HikariDataSource(direct)));
    }

    /**
     * @param transactionPooling as given to the builders; {@code null} to let them detect it
     * @param direct a direct connection to the server behind {@code bouncer}, for the checks
     */
    private void burn(PgBouncer bouncer, String poolMode, Boolean transactionPooling, DataSource direct)
            throws Exception {
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        DbTasks worker = closing(DbTasks.builder(pool(bouncer.jdbcUrl(), 10))
                .queue("default", 8)
                .lease(Duration.ofSeconds(5))
                .transactionPooling(transactionPooling)
                .handler(
                        "bouncer.probe",
                        Payload.class,
                        (ctx, p) -> runs.computeIfAbsent(ctx.taskId(), k -> new AtomicInteger())
                                .incrementAndGet())
                .build());
        DbTasks producer = closing(DbTasks.builder(pool(bouncer.jdbcUrl(), 10))
                .workers(false)
                .transactionPooling(transactionPooling)
                .handler("bouncer.probe", Payload.class, (ctx, p) -> {})
                .build());
        worker.start();

        List<Long> acknowledged = Collections.synchronizedList(new ArrayList<>());
        Map<String, Integer> errors = new ConcurrentHashMap<>();
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        List<Future<?>> done = new ArrayList<>();
        AtomicInteger next = new AtomicInteger();
        for (int c = 0; c < CLIENTS; c++) {
            done.add(clients.submit(() -> {
                int n;
                while ((n = next.getAndIncrement()) < TASKS) {
                    try {
                        EnqueueResult r = (n % 2 == 0 ? producer : worker)
                                .enqueue(TaskRequest.builder("bouncer.probe")
                                        .payload(new Payload(n))
                                        .idempotencyKey(n % 3 == 0 ? "bouncer-" + n : null)
                                        .build());
                        acknowledged.add(r.task().id());
                    } catch (RuntimeException e) {
                        Throwable root = e;
                        while (root.getCause() != null) {
                            root = root.getCause();
                        }
                        errors.merge(String.valueOf(root.getMessage()).replaceAll("\\d+", "n"), 1, Integer::sum);
                    }
                }
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        clients.shutdown();

        List<Long> missing = new ArrayList<>();
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    Map<Long, String> stored = storedStatuses(direct);
                    missing.clear();
                    long unfinished = 0;
                    for (long id : acknowledged) {
                        String s = stored.get(id);
                        if (s == null) {
                            missing.add(id);
                        } else if (!s.equals("SUCCEEDED")) {
                            unfinished++;
                        }
                    }
                    return unfinished == 0;
                });
        long twice = runs.values().stream().filter(r -> r.get() > 1).count();
        long succeededAttempts = count(direct, "SELECT count(*) FROM dbtasks_attempt WHERE outcome = 'SUCCEEDED'");
        System.out.println("PGBOUNCER " + poolMode + ": tasks=" + TASKS + " clients=" + CLIENTS + " acknowledged="
                + acknowledged.size() + " refused=" + (TASKS - acknowledged.size()) + " lost=" + missing.size()
                + " ranTwice=" + twice + " succeededAttempts=" + succeededAttempts + " errors=" + errors);
        assertThat(missing).as("acknowledged tasks that were never stored").isEmpty();
        assertThat(twice).as("tasks whose handler ran twice").isZero();
        assertThat(errors).as("enqueues refused with an error").isEmpty();
        assertThat(acknowledged).as("enqueues acknowledged").hasSize(TASKS);
        assertThat(succeededAttempts).as("SUCCEEDED attempt rows").isEqualTo(TASKS);
    }

    /**
     * One instance enqueues, another (its own pool, idle, polling every 500 ms) runs: the time from
     * the enqueue's return to the handler's start. Through session pooling the other instance hears
     * the NOTIFY; through transaction pooling its listener finds that notifications do not arrive
     * and polling is the fallback.
     */
    private void crossInstanceLatency(String poolMode) throws Exception {
        PgBouncer bouncer =
                closing(PgBouncer.start(TestDatabase.POSTGRESQL.url(), poolMode, serverConnections(poolMode)));
        Map<Integer, Long> startedAt = new ConcurrentHashMap<>();
        DbTasks worker = closing(DbTasks.builder(pool(bouncer.jdbcUrl(), 4))
                .queue("default", 2)
                .handler("bouncer.probe", Payload.class, (ctx, p) -> startedAt.put(p.n(), System.nanoTime()))
                .build());
        DbTasks producer = closing(DbTasks.builder(pool(bouncer.jdbcUrl(), 4))
                .workers(false)
                .handler("bouncer.probe", Payload.class, (ctx, p) -> {})
                .build());
        worker.start();
        // The listener's test notification comes back within 3 s, or the listener reports that it did not.
        if (poolMode.equals("transaction")) {
            await().atMost(Duration.ofSeconds(10)).until(this::listenerReportedFailure);
        } else {
            Thread.sleep(4500);
        }
        boolean reported = listenerReportedFailure();
        List<Long> latencies = new ArrayList<>();
        for (int n = 0; n < 30; n++) {
            Thread.sleep(100 + (n * 37) % 300); // land anywhere in the worker's poll cycle
            long enqueued = System.nanoTime();
            producer.enqueue(TaskRequest.of("bouncer.probe", new Payload(n)));
            int key = n;
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(1))
                    .until(() -> startedAt.containsKey(key));
            latencies.add((startedAt.get(key) - enqueued) / 1_000_000);
        }
        Collections.sort(latencies);
        System.out.println(
                "PGBOUNCER " + poolMode + " cross-instance enqueue call to handler start (ms, 30 tasks): min="
                        + latencies.get(0) + " median=" + latencies.get(15) + " max=" + latencies.get(29));
        assertThat(reported)
                .as("the listener reported that LISTEN does not work through " + poolMode + " pooling")
                .isEqualTo(poolMode.equals("transaction"));
    }

    /**
     * Transaction pooling: 4 server connections for every client, so transactions keep changing
     * backends. Session pooling holds a server connection per client connection: enough for all.
     */
    private static int serverConnections(String poolMode) {
        return poolMode.equals("transaction") ? 4 : 40;
    }

    private boolean listenerReportedFailure() {
        return listenerLog.contains("LISTEN does not work");
    }

    private static long count(DataSource direct, String sql) throws SQLException {
        try (Connection c = direct.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static Map<Long, String> storedStatuses(DataSource direct) throws SQLException {
        Map<Long, String> out = new HashMap<>();
        try (Connection c = direct.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT id, status FROM dbtasks_task")) {
            while (rs.next()) {
                out.put(rs.getLong(1), rs.getString(2));
            }
        }
        return out;
    }
}
