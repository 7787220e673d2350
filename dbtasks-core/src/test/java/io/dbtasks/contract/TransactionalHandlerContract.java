package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.Attempt;
import io.dbtasks.AttemptOutcome;
import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Transactional handlers: the handler's
 * effect commits in one transaction with the guarded completion, so a worker that lost its lease
 * leaves no effect behind.
 */
public abstract class TransactionalHandlerContract extends EngineHarness {

    @BeforeEach
    void createEffectTable() throws Exception {
        try (Connection c = database().dataSource().getConnection();
                Statement s = c.createStatement()) {
            try {
                s.executeUpdate("DROP TABLE tx_effect");
            } catch (Exception absent) {
                // first run
            }
            s.executeUpdate("CREATE TABLE tx_effect (task_id BIGINT NOT NULL, token BIGINT NOT NULL)");
        }
    }

    private static void insertEffect(Connection tx, long taskId, long token) throws Exception {
        try (PreparedStatement ps = tx.prepareStatement("INSERT INTO tx_effect (task_id, token) VALUES (?, ?)")) {
            ps.setLong(1, taskId);
            ps.setLong(2, token);
            ps.executeUpdate();
        }
    }

    private List<Long> effectTokens(long taskId) throws Exception {
        try (Connection c = database().dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT token FROM tx_effect WHERE task_id = ?")) {
            ps.setLong(1, taskId);
            List<Long> tokens = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    tokens.add(rs.getLong(1));
                }
            }
            return tokens;
        }
    }

    @Test
    void effectAndSuccessCommitTogether() throws Exception {
        DbTasks tasks = engine(b -> b.transactionalHandler(
                "tx.effect", Void.class, (ctx, tx, p) -> insertEffect(tx, ctx.taskId(), ctx.fencingToken())));
        long id = tasks.enqueue(TaskRequest.of("tx.effect", null)).task().id();
        tasks.start();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> tasks.find(id).orElseThrow().status() == TaskStatus.SUCCEEDED);
        assertThat(effectTokens(id))
                .containsExactly(tasks.find(id).orElseThrow().fencingToken());
    }

    @Test
    void failedAttemptRollsItsEffectBackAndTheRetryCommitsOnce() throws Exception {
        DbTasks tasks = engine(b -> b.transactionalHandler("tx.flaky", Void.class, (ctx, tx, p) -> {
            insertEffect(tx, ctx.taskId(), ctx.fencingToken());
            if (ctx.attempt() == 1) {
                throw new IllegalStateException("first attempt fails after writing its effect");
            }
        }));
        long id = tasks.enqueue(TaskRequest.builder("tx.flaky")
                        .maxAttempts(3)
                        .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(50)))
                        .build())
                .task()
                .id();
        tasks.start();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> tasks.find(id).orElseThrow().status() == TaskStatus.SUCCEEDED);
        assertThat(tasks.attempts(id))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.FAILED, AttemptOutcome.SUCCEEDED);
        assertThat(effectTokens(id))
                .containsExactly(tasks.find(id).orElseThrow().fencingToken());
    }

    @Test
    void handlerWhoseLeaseWasTakenOverMidRunLeavesNoEffectAndTheNewOwnersEffectAppearsOnce() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<Long> returnedTokens = new java.util.concurrent.CopyOnWriteArrayList<>();
        // Worker A: heartbeats rarely and never rescues, so only the test's expiry and B's rescue act.
        DbTasks a = engine(b -> b.workerId("worker-a")
                .queue("default", 1)
                .lease(Duration.ofSeconds(5))
                .heartbeatInterval(Duration.ofMillis(4_500))
                .rescueInterval(Duration.ofHours(1))
                .transactionalHandler("tx.slow", Void.class, (ctx, tx, p) -> {
                    insertEffect(tx, ctx.taskId(), ctx.fencingToken());
                    entered.countDown();
                    release.await(30, TimeUnit.SECONDS);
                    returnedTokens.add(ctx.fencingToken());
                }));
        long id = a.enqueue(TaskRequest.builder("tx.slow").maxAttempts(3).build())
                .task()
                .id();
        a.start();
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        long tokenA = a.find(id).orElseThrow().fencingToken();

        // A stalls (a GC pause, say) past its lease: expire it by the database clock.
        try (Connection c = database().dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(
                        "UPDATE dbtasks_task SET lease_expires_at = run_at WHERE id = ? AND lease_token = ?")) {
            ps.setLong(1, id);
            ps.setLong(2, tokenA);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
        // Worker B rescues the task and runs it to completion with its own token.
        DbTasks b = engine(x -> x.workerId("worker-b")
                .transactionalHandler(
                        "tx.slow", Void.class, (ctx, tx, p) -> insertEffect(tx, ctx.taskId(), ctx.fencingToken())));
        b.start();
        await().atMost(Duration.ofSeconds(15))
                .until(() -> b.find(id).orElseThrow().status() == TaskStatus.SUCCEEDED);
        long tokenB = b.find(id).orElseThrow().fencingToken();
        assertThat(tokenB).isGreaterThan(tokenA);

        // A wakes up and returns: its guarded completion matches 0 rows and its effect rolls back.
        release.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> a.runningCount() == 0);
        assertThat(effectTokens(id)).containsExactly(tokenB);
        assertThat(b.find(id).orElseThrow().status()).isEqualTo(TaskStatus.SUCCEEDED);
        assertThat(b.attempts(id))
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.LEASE_EXPIRED, AttemptOutcome.SUCCEEDED);
    }
}
