package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.testing.TcpProxy;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The engine reaches its database through a {@link TcpProxy} the test can cut and restore, as in an
 * outage. Run against PostgreSQL and MariaDB by the subclasses (H2 is in process).
 */
public abstract class OutageContract extends EngineHarness {
    static final String KIND = "outage.work";
    private TcpProxy proxy;
    private final List<AutoCloseable> pools = new ArrayList<>();

    /** A non-pooling DataSource for {@code url}, so no pool's own retry backoff is measured. */
    protected abstract DataSource unpooled(String url);

    protected TcpProxy proxy() throws Exception {
        if (proxy == null) {
            URI uri = URI.create(database().url().substring("jdbc:".length()));
            proxy = new TcpProxy(uri.getHost(), uri.getPort());
        }
        return proxy;
    }

    @AfterEach
    void closeProxy() throws Exception {
        stopEngines(); // before the proxy goes, so stopping does not wait on a dead connection
        for (AutoCloseable pool : pools) {
            pool.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    /**
     * After an outage long enough for the claim loop's error backoff to have
     * grown (to several seconds on the old code, doubling up to 30 s), a worker with a backlog
     * resumes within about a second of the database being reachable again.
     */
    @Test
    void workResumesWithinASecondOfTheDatabaseReturning() throws Exception {
        TcpProxy p = proxy();
        AtomicInteger runs = new AtomicInteger();
        DbTasks worker = track(DbTasks.builder(unpooled(p.rewrite(database().url())))
                .workerId("behind-proxy")
                .pollInterval(Duration.ofMillis(500))
                .rescueInterval(Duration.ofSeconds(1))
                .lease(Duration.ofSeconds(30))
                .shutdownTimeout(Duration.ofSeconds(2))
                .queue(DbTasks.DEFAULT_QUEUE, 2)
                .handler(KIND, Void.class, (ctx, payload) -> runs.incrementAndGet())
                .build());
        p.cut();
        List<TaskRequest> backlog = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            backlog.add(TaskRequest.of(KIND, null));
        }
        DbTasks producer = producer(); // the real database, not through the proxy
        producer.enqueueAll(backlog);
        worker.start();
        Thread.sleep(8_000); // the outage; the old backoff had reached 8 s: 0.5, 1, 2, 4, 8

        p.restore();
        long restored = System.nanoTime();
        eventually()
                .alias("a task of the backlog SUCCEEDED after the database returned")
                .until(() -> producer.stats().tasks().getOrDefault(TaskStatus.SUCCEEDED, 0L) > 0);
        long resumedMillis = (System.nanoTime() - restored) / 1_000_000;
        System.out.println("Work resumed " + resumedMillis + " ms after the database returned (" + database() + ")");

        assertThat(resumedMillis)
                .as("milliseconds from the database returning to the first completed task")
                .isLessThan(1_500);
        eventually().until(() -> runs.get() == 20);
    }

    /**
     * While the database hangs (here: the proxy passes no bytes, as when commits
     * wait for a synchronous standby that is gone), a statement the engine issues becomes an error
     * within the statement timeout, and {@link DbTasks#health()} reports the stall.
     */
    @Test
    void aStatementThatHangsFailsWithinTheStatementTimeoutAndHealthReportsIt() throws Exception {
        TcpProxy p = proxy();
        com.zaxxer.hikari.HikariConfig pool = new com.zaxxer.hikari.HikariConfig();
        pool.setJdbcUrl(p.rewrite(database().url()));
        pool.setMaximumPoolSize(2);
        pool.setConnectionTimeout(10_000);
        com.zaxxer.hikari.HikariDataSource pooled = new com.zaxxer.hikari.HikariDataSource(pool);
        pools.add(pooled);
        // Pooled, as in an application: the connections are open when the database starts to hang.
        DbTasks engine = track(DbTasks.builder(pooled)
                .workers(false)
                .statementTimeout(Duration.ofSeconds(1))
                .build());
        long id = engine.enqueue(TaskRequest.of(KIND, null)).task().id();

        p.freeze();
        java.util.concurrent.CompletableFuture<Object> hung =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> engine.find(id));
        Throwable failure;
        try {
            hung.get(10, java.util.concurrent.TimeUnit.SECONDS);
            throw new AssertionError("a statement completed while the database passed no bytes");
        } catch (java.util.concurrent.ExecutionException e) {
            failure = e.getCause();
        } finally {
            p.restore();
        }

        assertThat(failure).isInstanceOf(io.dbtasks.DbTasksException.class);
        io.dbtasks.DbTasksHealth health = engine.health();
        assertThat(health.healthy()).isFalse();
        assertThat(health.consecutiveFailures()).isGreaterThanOrEqualTo(1);
        assertThat(health.lastFailure()).contains("statementTimeout");
        // Once the database answers again, so does the engine, and health recovers.
        assertThat(engine.find(id)).isPresent();
        assertThat(engine.health().healthy()).isTrue();
        assertThat(engine.health().lastSuccessAt()).isNotNull();
    }

    /**
     * Health follows the paths that matter: while a held lock on the task table makes every claim
     * and enqueue wait, the engine reports DOWN within 2 s and for as long as the lock is held,
     * however many other units of database work (worker row, pause checks) succeed meanwhile; UP
     * again once the lock is gone.
     */
    @Test
    void healthIsDownWhileATableLockHoldsClaimsAndEnqueuesAndUpAfter() throws Exception {
        DbTasks worker = track(DbTasks.builder(dataSource())
                .workerId("held-lock")
                .pollInterval(Duration.ofMillis(100))
                .heartbeatInterval(Duration.ofMillis(200))
                .lease(Duration.ofSeconds(30))
                .shutdownTimeout(Duration.ofSeconds(2))
                .queue(DbTasks.DEFAULT_QUEUE, 2)
                .handler(KIND, Void.class, (ctx, payload) -> {})
                .build());
        worker.start();
        long done = worker.enqueue(TaskRequest.of(KIND, null)).task().id();
        awaitStatus(worker, done, TaskStatus.SUCCEEDED);
        eventually()
                .alias("healthy before the lock")
                .until(() -> worker.health().healthy());

        java.util.concurrent.ExecutorService enqueuers = java.util.concurrent.Executors.newSingleThreadExecutor();
        try (java.sql.Connection locker = dataSource().getConnection();
                java.sql.Statement s = locker.createStatement()) {
            locker.setAutoCommit(false);
            try {
                holdLockAndSampleHealth(worker, locker, s, enqueuers);
            } finally {
                if (dialect().name().equals("mariadb")) {
                    s.execute("UNLOCK TABLES");
                }
                locker.rollback();
                locker.setAutoCommit(true);
            }
        } finally {
            enqueuers.shutdown();
        }
        eventually()
                .alias("healthy again after the lock")
                .until(() -> worker.health().healthy());
        eventually().until(() -> worker.stats().tasks().getOrDefault(TaskStatus.SUCCEEDED, 0L) == 2);
    }

    private void holdLockAndSampleHealth(
            DbTasks worker,
            java.sql.Connection locker,
            java.sql.Statement s,
            java.util.concurrent.ExecutorService enqueuers)
            throws Exception {
        s.execute(
                dialect().name().equals("postgresql")
                        ? "LOCK TABLE dbtasks_task IN ACCESS EXCLUSIVE MODE"
                        : "LOCK TABLES dbtasks_task WRITE");
        long lockedAt = System.nanoTime();
        enqueuers.submit(() -> worker.enqueue(TaskRequest.of(KIND, null))); // waits on the lock
        await().atMost(Duration.ofSeconds(2))
                .pollInterval(Duration.ofMillis(20))
                .alias("health DOWN within 2 s of the lock")
                .until(() -> !worker.health().healthy());
        System.out.println("Health DOWN " + (System.nanoTime() - lockedAt) / 1_000_000 + " ms after the lock ("
                + database() + "): " + worker.health());
        for (int i = 0; i < 40; i++) { // 4 s of samples while the lock is held
            io.dbtasks.DbTasksHealth h = worker.health();
            assertThat(h.healthy())
                    .as("sample %d while the lock is held: %s", i, h)
                    .isFalse();
            Thread.sleep(100);
        }
        assertThat(worker.health().unavailable()).contains("claim");
    }

    /**
     * A frozen holder is bounded: a connection of the engine's that begins a transaction locking due
     * tasks, as a claim does, and then stays idle (a frozen process, a half-open connection) is ended
     * by the database after the idle-in-transaction limit the engine set from its lease, and another
     * engine then claims and runs the tasks. The limit is set only on connections the engine borrows:
     * an application transaction that an enqueue joins may stay idle longer and still commit.
     */
    @Test
    void aFrozenTransactionOnAnEngineConnectionGivesItsRowsBackAfterTheLease() throws Exception {
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(database().url());
        config.setMaximumPoolSize(1); // the engine's connection is the one the test freezes below
        config.setConnectionTimeout(30_000);
        com.zaxxer.hikari.HikariDataSource pool = new com.zaxxer.hikari.HikariDataSource(config);
        pools.add(pool);
        Duration lease = Duration.ofSeconds(2);
        DbTasks frozen = track(DbTasks.builder(pool)
                .workers(false)
                .migrate(false) // migrated already; Flyway would want a second connection
                .transactionPooling(false)
                .lease(lease)
                .shutdownTimeout(Duration.ofSeconds(1))
                .build());
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(frozen.enqueue(TaskRequest.of(KIND, null)).task().id()); // on the pooled connection
        }

        java.sql.Connection holder = pool.getConnection();
        holder.setAutoCommit(false);
        try (java.sql.Statement s = holder.createStatement();
                java.sql.ResultSet rs =
                        s.executeQuery("SELECT id FROM dbtasks_task WHERE status = 'PENDING' ORDER BY id FOR UPDATE")) {
            int locked = 0;
            while (rs.next()) {
                locked++;
            }
            assertThat(locked).isEqualTo(5);
        }
        long frozenAt = System.nanoTime();
        // The transaction now stays idle, holding the rows, as a frozen claim would.

        AtomicInteger runs = new AtomicInteger();
        DbTasks other = track(DbTasks.builder(dataSource())
                .workerId("other")
                .pollInterval(Duration.ofMillis(100))
                .shutdownTimeout(Duration.ofSeconds(2))
                .queue(DbTasks.DEFAULT_QUEUE, 5)
                .handler(KIND, Void.class, (ctx, payload) -> runs.incrementAndGet())
                .build());
        other.start();
        await().atMost(Duration.ofSeconds(15))
                .pollInterval(Duration.ofMillis(50))
                .alias("the rows of the frozen transaction claimed and run by another engine")
                .until(() -> runs.get() == 5);
        long freedMillis = (System.nanoTime() - frozenAt) / 1_000_000;
        System.out.println(
                "Rows of a frozen transaction run by another engine after " + freedMillis + " ms (" + database() + ")");
        assertThat(freedMillis).as("not before the limit").isGreaterThanOrEqualTo(lease.toMillis() - 200);
        for (long id : ids) {
            awaitStatus(other, id, TaskStatus.SUCCEEDED);
        }
        assertThatThrownBy(holder::commit)
                .as("the database ended the frozen session")
                .isInstanceOf(java.sql.SQLException.class);
        pool.evictConnection(holder);

        // An application transaction the engine joins keeps the server's own limits.
        try (java.sql.Connection app = dataSource().getConnection()) {
            app.setAutoCommit(false);
            long joined = frozen.enqueue(app, TaskRequest.of(KIND, null)).task().id();
            Thread.sleep(lease.toMillis() + 1_000);
            app.commit();
            app.setAutoCommit(true);
            awaitStatus(other, joined, TaskStatus.SUCCEEDED);
        }
    }

    private DbTasks track(DbTasks engine) {
        engines.add(engine);
        return engine;
    }
}
