package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.testing.TestDatabase;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** PostgreSQL only: LISTEN/NOTIFY wakes idle workers of other instances, so they need not poll. */
class PostgresNotifyTest extends EngineHarness {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Test
    void taskEnqueuedByAnotherInstanceStartsLongBeforeTheNextPoll() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        DbTasks worker = engine(b ->
                b.pollInterval(Duration.ofMinutes(5)).handler("notify.probe", Void.class, (ctx, p) -> ran.countDown()));
        worker.start();
        Thread.sleep(500); // the worker's first claim found nothing; it now sleeps for its 5-minute poll
        DbTasks producer = engine(b -> b.workers(false));
        long id = producer.enqueue(TaskRequest.of("notify.probe", null)).task().id();
        assertThat(ran.await(10, TimeUnit.SECONDS))
                .as("woken by NOTIFY, not by the 5-minute poll")
                .isTrue();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> producer.find(id).orElseThrow().status() == TaskStatus.SUCCEEDED);
    }

    @Test
    void notificationOfARolledBackEnqueueWakesNobodyAndStoresNothing() throws Exception {
        DbTasks producer = engine(b -> b.workers(false));
        try (var c = database().dataSource().getConnection()) {
            c.setAutoCommit(false);
            producer.enqueue(c, TaskRequest.of("notify.probe", null));
            c.rollback();
        }
        assertThat(producer.stats().tasks().get(TaskStatus.PENDING)).isZero();
    }
}
