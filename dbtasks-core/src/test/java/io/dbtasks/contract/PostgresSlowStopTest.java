package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL only (a table lock is the portable way to hold a claim mid-flight here): a claim that
 * is still waiting on the database when the engine stops returns its tasks to PENDING, unstarted,
 * instead of running them or leaving them leased in a buffer no one reads.
 */
class PostgresSlowStopTest extends EngineHarness {
    private static final String KIND = "slowstop.work";

    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Test
    void claimThatReturnsAfterStopBeganHandsItsTasksBackUnstarted() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        DbTasks tasks = engine(b -> b.handler(KIND, Void.class, (ctx, p) -> calls.incrementAndGet()));
        List<TaskRequest> three = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            three.add(TaskRequest.builder(KIND).maxAttempts(1).build());
        }
        tasks.enqueueAll(three);

        try (Connection lock = dataSource().getConnection()) {
            lock.setAutoCommit(false);
            try (Statement s = lock.createStatement()) {
                s.execute("LOCK TABLE dbtasks_task IN EXCLUSIVE MODE"); // plain reads pass, the claim waits
            }
            tasks.start();
            eventually()
                    .alias("the claim waiting on the table lock")
                    .until(() -> count("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                    + " AND query LIKE '%SKIP LOCKED%'")
                            >= 1);

            CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(() -> tasks.stop(Duration.ofSeconds(5)));
            Thread.sleep(300); // stop has begun and waits for the claim loop
            assertThat(stopped).isNotDone();
            lock.commit(); // the claim now returns its three tasks to a stopping loop
            assertThat(stopped.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        }

        assertThat(calls).hasValue(0);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'PENDING' AND attempt = 0"
                        + " AND lease_owner IS NULL AND lease_expires_at IS NULL"))
                .isEqualTo(3);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt")).isZero();

        DbTasks next = engine(b -> b.handler(KIND, Void.class, (ctx, p) -> calls.incrementAndGet()));
        next.start();
        eventually()
                .alias("another engine runs all three")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'SUCCEEDED'") == 3);
        assertThat(calls).hasValue(3);
    }
}
