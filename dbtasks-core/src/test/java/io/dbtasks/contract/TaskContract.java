package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.AttemptOutcome;
import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The behaviour every database must show; run once per database by the subclasses. */
public abstract class TaskContract extends EngineHarness {

    record Order(long orderId, String operator) {}

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
        await().atMost(Duration.ofSeconds(10))
                .until(() -> tasks.find(r.task().id()).orElseThrow().status() == TaskStatus.SUCCEEDED);
        assertThat(runs).hasValue(1);
        var attempts = tasks.attempts(r.task().id());
        assertThat(attempts).hasSize(1);
        assertThat(attempts.get(0).outcome()).isEqualTo(AttemptOutcome.SUCCEEDED);
    }
}
