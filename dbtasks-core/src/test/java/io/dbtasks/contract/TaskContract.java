package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.Attempt;
import io.dbtasks.AttemptOutcome;
import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.InvalidPayloadException;
import io.dbtasks.NonRetryableException;
import io.dbtasks.Task;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.UnknownKindException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The basic life of a task, and bad input that must fail its own task without harming others. Run
 * once per database by the subclasses.
 */
public abstract class TaskContract extends EngineHarness {

    record Order(long orderId, String operator) {}

    /**
     * A settle that moves a row into its day of history by a DELETE and an INSERT carries every
     * column over by name ({@code Dialect.TASK_TABLE_COLUMNS}); a column missing from that list would
     * be lost at the move.
     */
    @Test
    void theTaskTablesColumnsAreTheOnesARowMoveCarries() throws Exception {
        java.util.Set<String> columns = new java.util.TreeSet<>();
        try (java.sql.Connection c = dataSource().getConnection();
                java.sql.Statement s = c.createStatement();
                java.sql.ResultSet rs = s.executeQuery("SELECT * FROM dbtasks_task WHERE 1 = 0")) {
            java.sql.ResultSetMetaData meta = rs.getMetaData();
            for (int i = 1; i <= meta.getColumnCount(); i++) {
                columns.add(meta.getColumnName(i).toLowerCase(java.util.Locale.ROOT));
            }
        }
        columns.remove("pending_key"); // MariaDB: generated from status and concurrency_key
        assertThat(columns).containsExactlyInAnyOrderElementsOf(io.dbtasks.internal.dialect.Dialect.TASK_TABLE_COLUMNS);
    }

    @Test
    void enqueuedTaskRunsOnceAndSucceedsWithAnAttemptRow() {
        AtomicInteger runs = new AtomicInteger();
        DbTasks tasks = engine(b -> b.handler("order.sync", Order.class, (ctx, order) -> {
            assertThat(order.orderId()).isEqualTo(10001L);
            runs.incrementAndGet();
        }));
        EnqueueResult r = tasks.enqueue(TaskRequest.of("order.sync", new Order(10001, "admin")));
        assertThat(r.duplicate()).isFalse();
        assertThat(r.task().status()).isEqualTo(TaskStatus.PENDING);
        tasks.start();
        Task done = awaitStatus(tasks, r.task().id(), TaskStatus.SUCCEEDED);
        assertThat(runs).hasValue(1);
        assertThat(done.attempt()).isEqualTo(1);
        assertThat(done.finishedAt()).isNotNull();
        assertThat(done.leaseExpiresAt()).isNull();
        assertThat(done.lastError()).isNull();
        assertThat(done.leaseOwner())
                .as("no lease is held once the task left RUNNING")
                .isNull();
        var attempts = tasks.attempts(r.task().id());
        assertThat(attempts).hasSize(1);
        assertThat(attempts.get(0).outcome()).isEqualTo(AttemptOutcome.SUCCEEDED);
    }

    @Test
    void handlerSeesItsTaskIdAttemptTokenAndWorker() {
        Map<String, Object> seen = new ConcurrentHashMap<>();
        DbTasks tasks = engine(b -> b.workerId("ctx-worker").handler("ctx", Void.class, (ctx, p) -> {
            seen.put("id", ctx.taskId());
            seen.put("kind", ctx.kind());
            seen.put("queue", ctx.queue());
            seen.put("attempt", ctx.attempt());
            seen.put("max", ctx.maxAttempts());
            seen.put("token", ctx.fencingToken());
            seen.put("worker", ctx.workerId());
            seen.put("lost", ctx.isLeaseLost());
            seen.put("cancel", ctx.isCancellationRequested());
            ctx.heartbeat(); // an explicit renewal under a live lease just works
        }));
        long id = tasks.enqueue(TaskRequest.builder("ctx").maxAttempts(5).build())
                .task()
                .id();
        tasks.start();

        Task done = awaitStatus(tasks, id, TaskStatus.SUCCEEDED);

        assertThat(seen)
                .containsEntry("id", id)
                .containsEntry("kind", "ctx")
                .containsEntry("queue", DbTasks.DEFAULT_QUEUE)
                .containsEntry("attempt", 1)
                .containsEntry("max", 5)
                .containsEntry("token", done.fencingToken())
                .containsEntry("worker", "ctx-worker")
                .containsEntry("lost", false)
                .containsEntry("cancel", false);
    }

    @Test
    void badPayloadsUnknownKindsAndThrownErrorsFailOnlyTheirOwnTasks() {
        DbTasks tasks = engine(b -> b.handler("order.sync", Order.class, (ctx, order) -> {
                    assertThat(order).isNotNull();
                })
                .handler("asserts", Void.class, (ctx, p) -> {
                    throw new AssertionError("invariant broken: total < 0");
                })
                .handler("recurses", Void.class, (ctx, p) -> recurse(0))
                .unclaimableGrace(Duration.ofMillis(500)));
        List<Long> good = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            good.add(tasks.enqueue(TaskRequest.of("order.sync", new Order(i, "ok")))
                    .task()
                    .id());
        }
        long malformed = tasks.enqueue(TaskRequest.of("order.sync", new Order(1, "x")))
                .task()
                .id();
        assertThat(sql("UPDATE dbtasks_task SET payload = ? WHERE id = ?", "{not json", malformed))
                .isEqualTo(1);
        long wrongShape = tasks.enqueue(TaskRequest.of("order.sync", List.of("a", "b")))
                .task()
                .id();
        long unknown =
                tasks.enqueue(TaskRequest.of("no.such.kind", null)).task().id();
        long asserts = tasks.enqueue(TaskRequest.of("asserts", null)).task().id();
        long recurses = tasks.enqueue(TaskRequest.of("recurses", null)).task().id();
        for (int i = 10; i < 20; i++) {
            good.add(tasks.enqueue(TaskRequest.of("order.sync", new Order(i, "ok")))
                    .task()
                    .id());
        }

        tasks.start();

        assertFailedOnce(tasks, malformed, InvalidPayloadException.class, "order.sync", Order.class.getName());
        assertFailedOnce(tasks, wrongShape, InvalidPayloadException.class, "order.sync", Order.class.getName());
        // A kind no live engine has is never claimed: it ends FAILED after the grace, with no attempt.
        Task unknownFailed = awaitStatus(tasks, unknown, TaskStatus.FAILED);
        assertThat(unknownFailed.lastError())
                .contains("No live engine of queue 'default' can run kind 'no.such.kind'")
                .contains("Register a handler for 'no.such.kind'");
        assertThat(unknownFailed.attempt()).isZero();
        assertThat(tasks.attempts(unknown)).isEmpty();
        assertFailedOnce(tasks, asserts, AssertionError.class, "invariant broken: total < 0");
        assertFailedOnce(tasks, recurses, StackOverflowError.class);
        for (long id : good) {
            awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
        }
        // The engine is still working normally afterwards.
        long after = tasks.enqueue(TaskRequest.of("order.sync", new Order(99, "ok")))
                .task()
                .id();
        awaitStatus(tasks, after, TaskStatus.SUCCEEDED);
        assertThat(tasks.stats().tasks().get(TaskStatus.SUCCEEDED)).isEqualTo(21);
    }

    private static int recurse(int depth) {
        return recurse(depth + 1) + 1;
    }

    private static void assertFailedOnce(DbTasks tasks, long id, Class<? extends Throwable> error, String... says) {
        Task failed = awaitStatus(tasks, id, TaskStatus.FAILED);
        assertThat(failed.attempt()).as("attempts of task %d", id).isEqualTo(1);
        assertThat(failed.lastError()).startsWith(error.getName());
        for (String s : says) {
            assertThat(failed.lastError()).contains(s);
        }
        List<Attempt> attempts = tasks.attempts(id);
        assertThat(attempts).hasSize(1);
        assertThat(attempts.get(0).outcome()).isEqualTo(AttemptOutcome.FAILED);
        assertThat(attempts.get(0).errorClass()).isEqualTo(error.getName());
        assertThat(attempts.get(0).stackTrace()).startsWith(error.getName());
    }

    @Test
    void payloadsAndErrorsKeepEveryCharacter() {
        String text = "Gr\u00fc\u00dfe \ud83d\ude80 \u65e5\u672c\u8a9e \u0451\u0436 \"quoted\" \\ back\nline";
        Map<String, Object> seen = new ConcurrentHashMap<>();
        DbTasks tasks = engine(b -> b.handler("order.sync", Order.class, (ctx, order) -> {
            seen.put("operator", order.operator());
            throw new NonRetryableException("refused: " + order.operator());
        }));
        long id = tasks.enqueue(TaskRequest.builder("order.sync")
                        .payload(new Order(7, text))
                        .name(text)
                        .reference("\u2116 42")
                        .build())
                .task()
                .id();
        tasks.start();

        Task failed = awaitStatus(tasks, id, TaskStatus.FAILED);

        assertThat(seen).containsEntry("operator", text);
        assertThat(failed.name()).isEqualTo(text);
        assertThat(failed.reference()).isEqualTo("\u2116 42");
        assertThat(failed.lastError()).isEqualTo(NonRetryableException.class.getName() + ": refused: " + text);
        assertThat(tasks.attempts(id).get(0).errorMessage()).isEqualTo("refused: " + text);
    }

    @Test
    void failureWhoseMessageHoldsNulCharactersOrIsHugeIsRecordedPromptly() {
        DbTasks tasks = engine(b -> b.handler("binary", Void.class, (ctx, p) -> {
                    throw new NonRetryableException("unexpected byte \u0000 at offset 17");
                })
                .handler("chatty", Void.class, (ctx, p) -> {
                    throw new NonRetryableException("x".repeat(200_000));
                }));
        long binary = tasks.enqueue(TaskRequest.builder("binary").maxAttempts(1).build())
                .task()
                .id();
        long chatty = tasks.enqueue(TaskRequest.builder("chatty").maxAttempts(1).build())
                .task()
                .id();
        tasks.start();

        // FAILED by the worker's own record, well before its 5 s lease could expire and be rescued.
        Task failed = eventually()
                .atMost(Duration.ofSeconds(3))
                .until(() -> tasks.find(binary).orElseThrow(), t -> t.status() == TaskStatus.FAILED);
        assertThat(failed.lastError()).contains("unexpected byte").contains("at offset 17");
        Attempt a = tasks.attempts(binary).get(0);
        assertThat(a.outcome()).isEqualTo(AttemptOutcome.FAILED);
        assertThat(a.errorMessage()).startsWith("unexpected byte").endsWith("at offset 17");
        assertThat(a.stackTrace()).contains("unexpected byte");

        Task huge = awaitStatus(tasks, chatty, TaskStatus.FAILED);
        assertThat(huge.lastError()).hasSizeLessThanOrEqualTo(4000).endsWith("[truncated]");
        Attempt h = tasks.attempts(chatty).get(0);
        assertThat(h.outcome()).isEqualTo(AttemptOutcome.FAILED);
        assertThat(h.errorMessage()).hasSizeLessThanOrEqualTo(4000);
        assertThat(h.stackTrace()).hasSizeLessThanOrEqualTo(16000);
    }

    @Test
    void validateRefusesUnknownKindsAndUnreadablePayloads() {
        DbTasks tasks = engine(b -> b.workers(false).handler("order.sync", Order.class, (ctx, o) -> {}));
        tasks.validate("order.sync", "{\"orderId\":1,\"operator\":\"a\"}");
        assertThatThrownBy(() -> tasks.validate("order.sync", null))
                .isInstanceOf(InvalidPayloadException.class)
                .hasMessageContaining("needs a payload");
        assertThatThrownBy(() -> tasks.validate("order.sync", "{not json"))
                .isInstanceOf(InvalidPayloadException.class)
                .hasMessageContaining("order.sync");
        assertThatThrownBy(() -> tasks.validate("order.sync", "[1, 2]")).isInstanceOf(InvalidPayloadException.class);
        assertThatThrownBy(() -> tasks.validate("nope", "{}"))
                .isInstanceOf(UnknownKindException.class)
                .hasMessageContaining("nope")
                .hasMessageContaining("order.sync");
        assertThat(tasks.kinds()).containsExactly("order.sync");
    }

    @Test
    void builderRefusesOutOfRangeSettingsAndNamesLongerThanTheirColumns() {
        assertThatThrownBy(() -> DbTasks.builder(dataSource())
                        .lease(Duration.ofSeconds(1))
                        .heartbeatInterval(Duration.ofSeconds(1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("heartbeatInterval");
        assertThatThrownBy(() -> DbTasks.builder(dataSource()).claimBatch(0).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DbTasks.builder(dataSource()).queue("q", 0))
                .isInstanceOf(IllegalArgumentException.class);
        // Names longer than their columns would make every claim fail at run time.
        String tooLong = "w".repeat(TaskRequest.MAX_NAME_LENGTH + 1);
        assertThatThrownBy(() -> DbTasks.builder(dataSource()).workerId(tooLong).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("workerId");
        assertThatThrownBy(() -> DbTasks.builder(dataSource()).workerId(" ").build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DbTasks.builder(dataSource()).queue(tooLong, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("queue");
        assertThatThrownBy(() -> DbTasks.builder(dataSource()).queue("", 1))
                .isInstanceOf(IllegalArgumentException.class);
        String longest = "w".repeat(TaskRequest.MAX_NAME_LENGTH);
        DbTasks fine = engine(b -> b.workerId(longest).queue(longest, 1).handler("named", Void.class, (ctx, p) -> {}));
        long id = fine.enqueue(TaskRequest.builder("named").queue(longest).build())
                .task()
                .id();
        fine.start();
        assertThat(awaitStatus(fine, id, TaskStatus.SUCCEEDED).attempt()).isEqualTo(1);
    }
}
