package io.dbtasks.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.Task;
import io.dbtasks.TaskRequest;
import io.dbtasks.lock.Lease;
import io.dbtasks.testing.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The lossy failover forced: a private primary with an asynchronous standby; the standby is stopped,
 * the primary acknowledges enqueues, claims and lease-lock grants that the standby never receives,
 * its postmaster is killed with {@code SIGKILL} and the standby promoted. Then the new primary
 * enqueues, claims and grants as many again. No id acknowledged by the old primary may name another
 * task on the new one, and no fencing token (claim or lock) may be issued on both; ids and tokens
 * issued after the promotion are greater than every one issued before it. Skipped with the reason
 * where the PostgreSQL binaries (Debian's postgresql) are missing. 30-60 s on the shared 2-core
 * machine, most of it the pair's start (initdb, base backup).
 */
class LossyFailoverTest {
    private static final String KIND = "lossy";
    private static final int BEFORE = 20;
    private static final int LOST = 200;
    private static final int AFTER = 200;
    private static final int LOCK_GRANTS = 100;
    /** The largest integer a JavaScript number holds exactly. */
    private static final long JS_MAX_SAFE = (1L << 53) - 1;

    @Test
    void noIdOrTokenIssuedBeforeAnAsynchronousFailoverIsIssuedAgainAfterIt() throws Exception {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "postgresql is not in dbtasks.test.databases");
        Optional<Path> bin = StandbyPair.binaries();
        Assumptions.assumeTrue(
                bin.isPresent(), "no PostgreSQL binaries under /usr/lib/postgresql/*/bin (Debian package postgresql)");
        try (StandbyPair pair = StandbyPair.start(bin.get(), "lossy", false)) {
            Map<Long, String> oldIds = new HashMap<>(); // id -> the task's name, acknowledged by the old primary
            Map<Long, Long> oldTokens = new ConcurrentHashMap<>(); // claim token -> task id
            List<Long> oldLockTokens = new ArrayList<>();
            try (HikariDataSource ds = ChaosRun.pool(pair.url(true, "lossy"), 4)) {
                DbTasks old = engine(ds, oldTokens);
                for (int i = 0; i < BEFORE; i++) {
                    Task t = old.enqueue(request("kept-" + i)).task();
                    oldIds.put(t.id(), t.name());
                }
                grantLocks(old, oldLockTokens, 1);
                pair.awaitReplayed(); // the schema and the first tasks are on the standby
                pair.stopStandby();
                for (int i = 0; i < LOST; i++) {
                    Task t = old.enqueue(request("lost-" + i)).task();
                    oldIds.put(t.id(), t.name());
                }
                grantLocks(old, oldLockTokens, LOCK_GRANTS);
                old.start();
                awaitClaims(oldTokens, BEFORE + LOST);
                old.stop(Duration.ofSeconds(5));
                pair.crashPrimary();
            }
            pair.startStandby();
            pair.promote();

            Map<Long, Long> newTokens = new ConcurrentHashMap<>();
            List<Long> newLockTokens = new ArrayList<>();
            Map<Long, String> newIds = new HashMap<>();
            long survived = 0;
            long renamed = 0;
            try (HikariDataSource ds = ChaosRun.pool(pair.url(false, "lossy"), 4)) {
                try (Connection c = ds.getConnection();
                        Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery(
                                "SELECT dbtasks_epoch(), (SELECT timeline_id FROM pg_control_checkpoint())")) {
                    rs.next();
                    System.out.println("lossy failover: right after the promotion, epoch " + rs.getLong(1)
                            + ", the last checkpoint's timeline " + rs.getLong(2));
                    assertThat(rs.getLong(1))
                            .as("the epoch right after the promotion, whatever the checkpoint")
                            .isEqualTo(2);
                }
                DbTasks promoted = engine(ds, newTokens);
                for (int i = 0; i < AFTER; i++) {
                    Task t = promoted.enqueue(request("new-" + i)).task();
                    newIds.put(t.id(), t.name());
                }
                grantLocks(promoted, newLockTokens, LOCK_GRANTS);
                promoted.start();
                awaitClaims(newTokens, AFTER); // the survivors' claims were lost: they may run again
                promoted.stop(Duration.ofSeconds(5));
                for (Map.Entry<Long, String> e : oldIds.entrySet()) {
                    Optional<Task> now = promoted.find(e.getKey());
                    if (now.isEmpty()) {
                        continue;
                    }
                    if (e.getValue().equals(now.get().name())) {
                        survived++;
                    } else {
                        renamed++;
                    }
                }
                promoted.close();
            }
            long lost = oldIds.size() - survived - renamed;
            System.out.println("lossy failover: " + oldIds.size() + " acknowledged by the old primary, " + survived
                    + " survived, " + lost + " lost, " + renamed + " ids naming another task; claim tokens on both: "
                    + intersection(oldTokens.keySet(), newTokens.keySet()).size() + ", lock tokens on both: "
                    + intersection(Set.copyOf(oldLockTokens), Set.copyOf(newLockTokens))
                            .size());
            assertThat(survived)
                    .as("the tasks enqueued before the standby stopped")
                    .isGreaterThanOrEqualTo(BEFORE);
            assertThat(renamed)
                    .as("ids acknowledged by the old primary that now name another task")
                    .isZero();
            assertThat(intersection(oldTokens.keySet(), newTokens.keySet()))
                    .as("claim tokens issued by both primaries")
                    .isEmpty();
            assertThat(intersection(Set.copyOf(oldLockTokens), Set.copyOf(newLockTokens)))
                    .as("lock tokens issued by both primaries")
                    .isEmpty();
            long oldMaxId =
                    oldIds.keySet().stream().mapToLong(Long::longValue).max().orElseThrow();
            long oldMaxToken = max(oldTokens.keySet(), oldLockTokens);
            assertThat(newIds.keySet())
                    .as("ids after the promotion: above every id before it, exact in JavaScript")
                    .allSatisfy(id -> assertThat(id).isGreaterThan(oldMaxId).isLessThanOrEqualTo(JS_MAX_SAFE));
            List<Long> newAll = new ArrayList<>(newTokens.keySet());
            newAll.addAll(newLockTokens);
            assertThat(newAll)
                    .as("tokens after the promotion: above every token before it")
                    .allSatisfy(t -> assertThat(t).isGreaterThan(oldMaxToken));
        }
    }

    private static DbTasks engine(HikariDataSource ds, Map<Long, Long> tokens) {
        return DbTasks.builder(ds)
                .queue(TaskRequest.DEFAULT_QUEUE, 4)
                .pollInterval(Duration.ofMillis(50))
                .lease(Duration.ofSeconds(30))
                .handler(KIND, Void.class, (ctx, payload) -> tokens.put(ctx.fencingToken(), ctx.taskId()))
                .build();
    }

    private static TaskRequest request(String name) {
        return TaskRequest.builder(KIND).name(name).build();
    }

    private static void grantLocks(DbTasks engine, List<Long> into, int grants) {
        for (int i = 0; i < grants; i++) {
            Lease l = engine.locks()
                    .tryAcquire("fence", Duration.ofSeconds(30))
                    .orElseThrow(() -> new AssertionError("the lock is not free"));
            into.add(l.token());
            engine.locks().release(l);
        }
    }

    private static void awaitClaims(Map<Long, Long> tokens, int atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (tokens.size() < atLeast && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(tokens.size()).as("claims within 60 s").isGreaterThanOrEqualTo(atLeast);
    }

    private static Set<Long> intersection(Set<Long> a, Set<Long> b) {
        Set<Long> both = new HashSet<>(a);
        both.retainAll(b);
        return both;
    }

    private static long max(Set<Long> a, List<Long> b) {
        long m = Long.MIN_VALUE;
        for (long v : a) {
            m = Math.max(m, v);
        }
        for (long v : b) {
            m = Math.max(m, v);
        }
        return m;
    }
}
