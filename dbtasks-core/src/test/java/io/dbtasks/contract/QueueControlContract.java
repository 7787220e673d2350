package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.IllegalTransitionException;
import io.dbtasks.Task;
import io.dbtasks.TaskNotFoundException;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.WorkerInfo;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Queue pause and resume across engines, the worker rows engines keep, and task deletion. Run once
 * per database by the subclasses.
 */
public abstract class QueueControlContract extends EngineHarness {
    static final String KIND = "control.work";

    @Test
    void aPausedQueueIsNotClaimedByAnyEngineUntilResumed() throws Exception {
        AtomicInteger ran = new AtomicInteger();
        DbTasks operator = producer();
        assertThat(operator.pauseQueue("mail", "test")).isTrue();
        assertThat(operator.pauseQueue("mail", "test")).isFalse();
        assertThat(operator.pausedQueues()).containsExactly("mail");

        DbTasks worker = engine(b -> b.workerId("control-worker")
                .queue("mail", 2)
                .queue(DbTasks.DEFAULT_QUEUE, 2)
                .handler(KIND, Void.class, (ctx, p) -> ran.incrementAndGet()));
        worker.start();
        long mail = operator.enqueue(TaskRequest.builder(KIND).queue("mail").build())
                .task()
                .id();
        long other = operator.enqueue(TaskRequest.builder(KIND).build()).task().id();

        // The unpaused queue runs; the paused one keeps its task PENDING well past many poll intervals.
        awaitStatus(worker, other, TaskStatus.SUCCEEDED);
        Thread.sleep(1500);
        assertThat(worker.find(mail).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        assertThat(ran).hasValue(1);

        // Resumed by another engine: the worker picks the pause up within its refresh interval.
        assertThat(operator.resumeQueue("mail")).isTrue();
        assertThat(operator.resumeQueue("mail")).isFalse();
        assertThat(operator.pausedQueues()).isEmpty();
        awaitStatus(worker, mail, TaskStatus.SUCCEEDED);
        assertThat(ran).hasValue(2);
    }

    @Test
    void aPauseTakesEffectOnARunningEngineWithoutARestart() throws Exception {
        CountDownLatch started = latch();
        DbTasks worker = engine(b -> b.workerId("control-worker")
                .queue(DbTasks.DEFAULT_QUEUE, 1)
                .handler(KIND, Void.class, (ctx, p) -> started.countDown()));
        worker.start();
        worker.enqueue(TaskRequest.builder(KIND).build());
        awaitLatch(started);

        producer().pauseQueue(DbTasks.DEFAULT_QUEUE, null);
        Thread.sleep(1500); // beyond the 1 s refresh bound
        long id = worker.enqueue(TaskRequest.builder(KIND).build()).task().id();
        Thread.sleep(1000);
        assertThat(worker.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        worker.resumeQueue(DbTasks.DEFAULT_QUEUE);
        awaitStatus(worker, id, TaskStatus.SUCCEEDED);
    }

    @Test
    void aStartedEngineRecordsItsWorkerRowAndHeartbeatsAndRemovesItAtStop() {
        DbTasks worker = engine(b -> b.workerId("row-worker")
                .queue("a", 3)
                .queue("b", 1)
                .lease(Duration.ofSeconds(3))
                .handler(KIND, Void.class, (ctx, p) -> {}));
        DbTasks observer = producer();
        assertThat(observer.workers()).isEmpty();
        worker.start();

        List<WorkerInfo> rows = observer.workers();
        assertThat(rows).hasSize(1);
        WorkerInfo row = rows.get(0);
        assertThat(row.workerId()).isEqualTo("row-worker");
        assertThat(row.queues()).containsEntry("a", 3).containsEntry("b", 1).hasSize(2);
        assertThat(row.heartbeatAt()).isAfterOrEqualTo(row.startedAt());
        eventually()
                .alias("a later heartbeat")
                .until(() -> observer.workers().get(0).heartbeatAt().isAfter(row.heartbeatAt()));

        worker.stop(Duration.ofSeconds(5));
        assertThat(observer.workers()).isEmpty();
        // A producer-only engine writes no row.
        producer().start();
        assertThat(observer.workers()).isEmpty();
    }

    @Test
    void deleteRemovesAFinishedOrPendingTaskWithItsAttemptsAndRefusesARunningOne() throws Exception {
        CountDownLatch release = latch();
        CountDownLatch started = latch();
        DbTasks worker = engine(b -> b.queue(DbTasks.DEFAULT_QUEUE, 1).handler(KIND, String.class, (ctx, p) -> {
            if ("block".equals(p)) {
                started.countDown();
                awaitLatch(release);
            } else {
                throw new IllegalStateException("boom");
            }
        }));
        long failed = worker.enqueue(
                        TaskRequest.builder(KIND).payload("fail").maxAttempts(1).build())
                .task()
                .id();
        worker.start();
        awaitStatus(worker, failed, TaskStatus.FAILED);
        assertThat(worker.attempts(failed)).hasSize(1);

        Task deleted = worker.delete(failed);
        assertThat(deleted.id()).isEqualTo(failed);
        assertThat(deleted.status()).isEqualTo(TaskStatus.FAILED);
        assertThat(worker.find(failed)).isEmpty();
        assertThat(worker.attempts(failed)).isEmpty();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE task_id = " + failed))
                .isZero();
        assertThatThrownBy(() -> worker.delete(failed)).isInstanceOf(TaskNotFoundException.class);

        long running = worker.enqueue(TaskRequest.builder(KIND).payload("block").build())
                .task()
                .id();
        awaitLatch(started);
        awaitStatus(worker, running, TaskStatus.RUNNING);
        assertThatThrownBy(() -> worker.delete(running))
                .isInstanceOf(IllegalTransitionException.class)
                .hasMessageContaining("RUNNING");
        assertThat(worker.find(running)).isPresent();
        release.countDown();
        awaitStatus(worker, running, TaskStatus.SUCCEEDED);
        worker.delete(running);
        assertThat(worker.find(running)).isEmpty();
    }
}
