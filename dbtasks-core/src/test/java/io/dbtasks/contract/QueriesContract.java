package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.Attempt;
import io.dbtasks.AttemptOutcome;
import io.dbtasks.DbTasks;
import io.dbtasks.NonRetryableException;
import io.dbtasks.Page;
import io.dbtasks.RetryPolicy;
import io.dbtasks.Task;
import io.dbtasks.TaskFilter;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStats;
import io.dbtasks.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading tasks back: find, list with filters and paging, attempts, stats. Run once per database. */
public abstract class QueriesContract extends EngineHarness {
    record Order(long orderId, String operator) {}

    @Test
    void findAndFindByKeyReturnEveryStoredField() {
        DbTasks tasks = producer();
        Task stored = tasks.enqueue(TaskRequest.builder("order.sync")
                        .payload(new Order(42, "admin"))
                        .queue("reports")
                        .priority(7)
                        .maxAttempts(4)
                        .retryPolicy(RetryPolicy.exponential(Duration.ofSeconds(2), 3.0, Duration.ofMinutes(5), 0.1))
                        .timeout(Duration.ofSeconds(30))
                        .idempotencyKey("order-sync:42")
                        .name("Sync order 42")
                        .reference("ORD-42")
                        .runAfter(Duration.ofHours(1))
                        .build())
                .task();

        Task found = tasks.find(stored.id()).orElseThrow();

        assertThat(found).isEqualTo(stored);
        assertThat(tasks.findByKey("order-sync:42")).contains(found);
        assertThat(found.queue()).isEqualTo("reports");
        assertThat(found.kind()).isEqualTo("order.sync");
        assertThat(found.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(found.priority()).isEqualTo(7);
        assertThat(found.attempt()).isZero();
        assertThat(found.maxAttempts()).isEqualTo(4);
        assertThat(found.name()).isEqualTo("Sync order 42");
        assertThat(found.reference()).isEqualTo("ORD-42");
        assertThat(found.payload()).contains("\"orderId\":42").contains("\"operator\":\"admin\"");
        assertThat(found.leaseOwner()).isNull();
        assertThat(found.fencingToken()).isNull();
        assertThat(found.leaseExpiresAt()).isNull();
        assertThat(found.cancelRequested()).isFalse();
        assertThat(found.startedAt()).isNull();
        assertThat(found.finishedAt()).isNull();
        assertThat(found.lastError()).isNull();
        assertThat(found.updatedAt()).isEqualTo(found.createdAt());
        assertThat(Duration.between(found.createdAt(), found.runAt()))
                .isCloseTo(Duration.ofHours(1), Duration.ofMillis(500));
        // The retry policy and timeout are stored with the task, not taken from the engine later.
        assertThat(count(
                        "SELECT COUNT(*) FROM dbtasks_task WHERE id = ? AND backoff = 'EXPONENTIAL'"
                                + " AND backoff_initial_ms = 2000 AND backoff_max_ms = 300000"
                                + " AND backoff_multiplier = 3.0 AND backoff_jitter = 0.1 AND timeout_ms = 30000",
                        stored.id()))
                .isEqualTo(1);
    }

    @Test
    void findOfAMissingIdOrKeyIsEmpty() {
        DbTasks tasks = producer();
        tasks.enqueue(
                TaskRequest.builder("order.sync").idempotencyKey("present").build());
        assertThat(tasks.find(-1)).isEmpty();
        assertThat(tasks.find(Long.MAX_VALUE)).isEmpty();
        assertThat(tasks.findByKey("absent")).isEmpty();
        assertThat(tasks.attempts(Long.MAX_VALUE)).isEmpty();
    }

    @Test
    void listFiltersByStatusQueueAndKindAndPagesNewestFirstWithTotal() {
        DbTasks tasks = producer();
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            ids.add(tasks.enqueue(TaskRequest.builder("x")
                            .queue("a")
                            .runAfter(Duration.ofHours(1))
                            .build())
                    .task()
                    .id());
        }
        for (int i = 0; i < 5; i++) {
            ids.add(tasks.enqueue(TaskRequest.builder("y").queue("b").build())
                    .task()
                    .id());
        }
        tasks.cancel(ids.get(0));
        tasks.cancel(ids.get(1));
        List<Long> newestFirst = ids.stream().sorted(Comparator.reverseOrder()).toList();

        Page<Task> first = tasks.list(TaskFilter.ALL, 0, 5);
        assertThat(first.total()).isEqualTo(12);
        assertThat(first.page()).isZero();
        assertThat(first.size()).isEqualTo(5);
        assertThat(first.items()).extracting(Task::id).containsExactlyElementsOf(newestFirst.subList(0, 5));
        assertThat(tasks.list(TaskFilter.ALL, 1, 5).items())
                .extracting(Task::id)
                .containsExactlyElementsOf(newestFirst.subList(5, 10));
        Page<Task> last = tasks.list(TaskFilter.ALL, 2, 5);
        assertThat(last.items()).extracting(Task::id).containsExactlyElementsOf(newestFirst.subList(10, 12));
        assertThat(last.total()).isEqualTo(12);
        Page<Task> beyond = tasks.list(TaskFilter.ALL, 3, 5);
        assertThat(beyond.items()).isEmpty();
        assertThat(beyond.total()).isEqualTo(12);

        assertListed(tasks, new TaskFilter(null, "a", null), 7);
        assertListed(tasks, new TaskFilter(null, null, "y"), 5);
        assertListed(tasks, new TaskFilter(TaskStatus.CANCELLED, null, null), 2);
        assertListed(tasks, new TaskFilter(TaskStatus.PENDING, "a", "x"), 5);
        assertListed(tasks, new TaskFilter(null, "b", "x"), 0);
        assertListed(tasks, null, 12);
        Page<Task> cancelled = tasks.list(new TaskFilter(TaskStatus.CANCELLED, null, null), 0, 10);
        assertThat(cancelled.items()).extracting(Task::id).containsExactly(ids.get(1), ids.get(0));
    }

    private static void assertListed(DbTasks tasks, TaskFilter filter, int expected) {
        Page<Task> page = tasks.list(filter, 0, 100);
        assertThat(page.total()).as("total of %s", filter).isEqualTo(expected);
        assertThat(page.items()).as("items of %s", filter).hasSize(expected);
        if (filter != null) {
            assertThat(page.items()).allSatisfy(t -> {
                if (filter.status() != null) {
                    assertThat(t.status()).isEqualTo(filter.status());
                }
                if (filter.queue() != null) {
                    assertThat(t.queue()).isEqualTo(filter.queue());
                }
                if (filter.kind() != null) {
                    assertThat(t.kind()).isEqualTo(filter.kind());
                }
            });
        }
    }

    @Test
    void listRefusesANegativePageOrAnOutOfRangeSize() {
        DbTasks tasks = producer();
        assertThatThrownBy(() -> tasks.list(TaskFilter.ALL, -1, 10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> tasks.list(TaskFilter.ALL, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> tasks.list(TaskFilter.ALL, 0, 1001)).isInstanceOf(IllegalArgumentException.class);
        assertThat(tasks.list(TaskFilter.ALL, 0, 1000).items()).isEmpty();
    }

    @Test
    void attemptsAreListedOldestFirstWithTheirWorkerAndTimes() {
        DbTasks tasks = engine(b -> b.workerId("lister").handler("twice", Void.class, (ctx, p) -> {
            if (ctx.attempt() == 1) {
                throw new IllegalStateException("first try");
            }
        }));
        long id = tasks.enqueue(TaskRequest.builder("twice")
                        .maxAttempts(2)
                        .retryPolicy(RetryPolicy.fixed(Duration.ZERO))
                        .build())
                .task()
                .id();
        tasks.start();
        Task done = awaitStatus(tasks, id, TaskStatus.SUCCEEDED);

        List<Attempt> attempts = tasks.attempts(id);

        assertThat(attempts).extracting(Attempt::attempt).containsExactly(1, 2);
        assertThat(attempts)
                .extracting(Attempt::outcome)
                .containsExactly(AttemptOutcome.FAILED, AttemptOutcome.SUCCEEDED);
        assertThat(attempts).extracting(Attempt::worker).containsOnly("lister");
        assertThat(attempts).extracting(Attempt::taskId).containsOnly(id);
        assertThat(attempts.get(1).errorClass()).isNull();
        assertThat(attempts.get(1).errorMessage()).isNull();
        assertThat(attempts.get(1).stackTrace()).isNull();
        assertThat(attempts.get(1).startedAt()).isAfterOrEqualTo(attempts.get(0).finishedAt());
        assertThat(attempts.get(1).startedAt()).isEqualTo(done.startedAt());
        assertThat(attempts.get(1).fencingToken()).isEqualTo(done.fencingToken());
        assertThat(done.finishedAt()).isNotNull();
    }

    @Test
    void statsCountTasksByStatusAndAttemptsByOutcomeOverallAndPerQueue() {
        DbTasks producer = producer();
        DbTasks billing = engine(b -> b.queue("billing", 2)
                .handler("charge.ok", Void.class, (ctx, p) -> {})
                .handler("charge.refused", Void.class, (ctx, p) -> {
                    throw new NonRetryableException("card refused");
                })
                .handler("charge.later", Void.class, (ctx, p) -> {
                    throw new IllegalStateException("gateway busy");
                }));
        List<Long> billed = new ArrayList<>();
        billed.add(producer.enqueue(
                        TaskRequest.builder("charge.ok").queue("billing").build())
                .task()
                .id());
        billed.add(producer.enqueue(
                        TaskRequest.builder("charge.ok").queue("billing").build())
                .task()
                .id());
        billed.add(producer.enqueue(
                        TaskRequest.builder("charge.refused").queue("billing").build())
                .task()
                .id());
        long later = producer.enqueue(TaskRequest.builder("charge.later")
                        .queue("billing")
                        .maxAttempts(2)
                        .retryPolicy(RetryPolicy.fixed(Duration.ofHours(1)))
                        .build())
                .task()
                .id();
        long mail = 0;
        for (int i = 0; i < 3; i++) {
            mail = producer.enqueue(
                            TaskRequest.builder("mail.send").queue("mail").build())
                    .task()
                    .id();
        }
        producer.cancel(mail);
        billing.start();
        for (long id : billed) {
            eventually().until(() -> billing.find(id).orElseThrow().status().isFinal());
        }
        eventually().until(() -> billing.attempts(later).size() == 1);

        TaskStats stats = producer.stats();

        assertThat(stats.tasks())
                .isEqualTo(counts(
                        TaskStatus.class,
                        Map.of(
                                TaskStatus.PENDING, 3L,
                                TaskStatus.SUCCEEDED, 2L,
                                TaskStatus.FAILED, 1L,
                                TaskStatus.CANCELLED, 1L)));
        assertThat(stats.attempts())
                .isEqualTo(
                        counts(AttemptOutcome.class, Map.of(AttemptOutcome.SUCCEEDED, 2L, AttemptOutcome.FAILED, 2L)));
        assertThat(stats.queues()).containsOnlyKeys("billing", "mail");
        TaskStats.QueueStats b = stats.queues().get("billing");
        assertThat(b.tasks())
                .isEqualTo(counts(
                        TaskStatus.class,
                        Map.of(TaskStatus.PENDING, 1L, TaskStatus.SUCCEEDED, 2L, TaskStatus.FAILED, 1L)));
        assertThat(b.attempts())
                .isEqualTo(
                        counts(AttemptOutcome.class, Map.of(AttemptOutcome.SUCCEEDED, 2L, AttemptOutcome.FAILED, 2L)));
        TaskStats.QueueStats m = stats.queues().get("mail");
        assertThat(m.tasks())
                .isEqualTo(counts(TaskStatus.class, Map.of(TaskStatus.PENDING, 2L, TaskStatus.CANCELLED, 1L)));
        assertThat(m.attempts()).isEqualTo(counts(AttemptOutcome.class, Map.of()));
    }

    @Test
    void statsOfAnEmptyDatabaseAreAllZero() {
        TaskStats stats = producer().stats();
        assertThat(stats.tasks()).isEqualTo(counts(TaskStatus.class, Map.of()));
        assertThat(stats.attempts()).isEqualTo(counts(AttemptOutcome.class, Map.of()));
        assertThat(stats.queues()).isEmpty();
    }

    /** Every constant of {@code type}, 0 unless {@code nonZero} says otherwise. */
    private static <E extends Enum<E>> Map<E, Long> counts(Class<E> type, Map<E, Long> nonZero) {
        Map<E, Long> m = new EnumMap<>(type);
        for (E e : type.getEnumConstants()) {
            m.put(e, nonZero.getOrDefault(e, 0L));
        }
        return m;
    }
}
