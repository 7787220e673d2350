package io.dbtasks.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Rescue beside settling, as after a kill -9: while workers complete and retry a steady flow of
 * tasks, rows left RUNNING by a killed worker (expired leases) keep turning up and the rescue sweep
 * takes them every few milliseconds, on a task table small enough that MariaDB's optimizer is
 * tempted to reach RUNNING rows through the rescue index. Settling and rescue must lock by primary
 * key and never deadlock, and every task ends as it should.
 */
class RescueSettleDeadlockTest {
    private static final int PRODUCERS = 4;
    private static final long RUN_MILLIS = 8000;

    record Payload(int n) {}

    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    @Test
    void mariaDbRescueBesideSettlingTakesNoDeadlock() throws Exception {
        run(TestDatabase.MARIADB);
    }

    @Test
    void postgresRescueBesideSettlingTakesNoDeadlock() throws Exception {
        run(TestDatabase.POSTGRESQL);
    }

    private void run(TestDatabase db) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        DbTasks.builder(db.dataSource()).workers(false).build().close();
        db.clear();
        HikariDataSource pool = db.newPool(12);
        closeables.add(pool);
        AtomicInteger ran = new AtomicInteger();
        DbTasks engine = DbTasks.builder(pool)
                .queue("default", 8)
                .lease(Duration.ofSeconds(2))
                .rescueInterval(Duration.ofMillis(20))
                .handler("settle.probe", Payload.class, (ctx, p) -> {
                    ran.incrementAndGet();
                    if (p.n() % 3 == 0 && ctx.attempt() == 1) {
                        throw new IllegalStateException("fails once, retried");
                    }
                })
                .handler("killed.probe", Payload.class, (ctx, p) -> {})
                .build();
        closeables.add(engine);
        engine.start();

        long end = System.nanoTime() + Duration.ofMillis(RUN_MILLIS).toNanos();
        AtomicInteger next = new AtomicInteger();
        AtomicInteger orphans = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(PRODUCERS + 1);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < PRODUCERS; t++) {
            done.add(threads.submit(() -> {
                while (System.nanoTime() < end) {
                    engine.enqueue(TaskRequest.builder("settle.probe")
                            .payload(new Payload(next.getAndIncrement()))
                            .retryPolicy(io.dbtasks.RetryPolicy.fixed(Duration.ofMillis(10)))
                            .build());
                }
                return null;
            }));
        }
        // The killed worker: tasks of a queue no one serves, left RUNNING with leases already expired.
        done.add(threads.submit(() -> {
            while (System.nanoTime() < end) {
                List<Long> ids = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    ids.add(engine.enqueue(TaskRequest.builder("killed.probe")
                                    .queue("killed")
                                    .maxAttempts(1)
                                    .payload(new Payload(i))
                                    .build())
                            .task()
                            .id());
                }
                orphan(db, ids);
                orphans.addAndGet(ids.size());
                Thread.sleep(15);
            }
            return null;
        }));
        for (Future<?> f : done) {
            f.get();
        }
        threads.shutdown();
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> count(db, "SELECT count(*) FROM dbtasks_task WHERE status NOT IN ('SUCCEEDED', 'FAILED')")
                        == 0);
        long succeeded =
                count(db, "SELECT count(*) FROM dbtasks_task WHERE kind = 'settle.probe' AND status = 'SUCCEEDED'");
        long rescued = count(db, "SELECT count(*) FROM dbtasks_task WHERE kind = 'killed.probe' AND status = 'FAILED'");
        System.out.println("RESCUE-SETTLE " + db + ": settled=" + succeeded + " of " + next.get() + " runs=" + ran.get()
                + " rescued=" + rescued + " of " + orphans.get() + " deadlocks=" + engine.deadlocks());
        assertThat(engine.deadlocks())
                .as("transactions rolled back as deadlock victims")
                .isZero();
        assertThat(succeeded).isEqualTo(next.get());
        assertThat(rescued).isEqualTo(orphans.get());
    }

    /** What a worker killed mid-attempt leaves: RUNNING rows under its token, leases already expired. */
    private static void orphan(TestDatabase db, List<Long> ids) throws SQLException {
        String past = db == TestDatabase.MARIADB
                ? "TIMESTAMPADD(SECOND, -1, UTC_TIMESTAMP(6))"
                : "clock_timestamp() - INTERVAL '1 second'";
        String token = db == TestDatabase.MARIADB ? "NEXTVAL(dbtasks_token_seq)" : "nextval('dbtasks_token_seq')";
        try (Connection c = db.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("UPDATE dbtasks_task SET status = 'RUNNING', attempt = 1,"
                        + " lease_owner = 'killed', lease_token = " + token + ", lease_expires_at = " + past
                        + ", started_at = " + past + ", heartbeat_at = " + past
                        + " WHERE id = ? AND status = 'PENDING'")) {
            for (long id : ids) {
                ps.setLong(1, id);
                ps.executeUpdate();
            }
        }
    }

    private static long count(TestDatabase db, String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
