package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

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
    void aBurstOfEnqueuesSendsOneSignalPerIntervalAndTheTrailingOneWakesTheOtherInstance() throws Exception {
        int tasks = 200;
        CountDownLatch ran = new CountDownLatch(tasks);
        DbTasks worker = engine(b -> b.pollInterval(Duration.ofMinutes(5))
                .queue("notify-burst", 4)
                .handler("notify.burst", Void.class, (ctx, p) -> ran.countDown()));
        worker.start();
        Thread.sleep(500); // the worker's first claim found nothing; it now sleeps for its 5-minute poll
        DbTasks producer = engine(b -> b.workers(false).enqueueSignalInterval(Duration.ofSeconds(2)));
        try (Connection listen = database().dataSource().getConnection();
                Statement s = listen.createStatement()) {
            s.execute("LISTEN dbtasks_task");
            long start = System.nanoTime();
            for (int i = 0; i < tasks; i++) {
                producer.enqueue(TaskRequest.builder("notify.burst")
                        .queue("notify-burst")
                        .build());
            }
            long burstMillis = (System.nanoTime() - start) / 1_000_000;
            assertThat(ran.await(20, TimeUnit.SECONDS))
                    .as(
                            "every task of the burst ran, woken by the signals and not by the 5-minute poll;"
                                    + " %d did not",
                            ran.getCount())
                    .isTrue();
            // The trailing signal is due 2 s after the first; hear it even if the worker never slept.
            Thread.sleep(Math.max(0, 3000 - (System.nanoTime() - start) / 1_000_000));
            List<String> heard = new ArrayList<>();
            PGNotification[] got;
            while ((got = listen.unwrap(PGConnection.class).getNotifications(500)) != null && got.length > 0) {
                for (PGNotification n : got) {
                    if (n.getParameter().equals("notify-burst")) { // other tests share the channel
                        heard.add(n.getParameter());
                    }
                }
            }
            assertThat(heard)
                    .as(
                            "one signal in the first enqueue's transaction and one trailing signal per 2-second"
                                    + " interval of the %d ms burst, not one per task",
                            burstMillis)
                    .hasSizeBetween(2, 2 + (int) (burstMillis / 2000));
        }
    }

    @Test
    void closingAProducerSendsItsTrailingSignalAtOnceRatherThanAtItsDueTime() throws Exception {
        CountDownLatch first = new CountDownLatch(1);
        CountDownLatch second = new CountDownLatch(2);
        DbTasks worker = engine(b -> b.pollInterval(Duration.ofMinutes(5))
                .queue("notify-close", 1)
                .handler("notify.close", Void.class, (ctx, p) -> {
                    first.countDown();
                    second.countDown();
                }));
        worker.start();
        Thread.sleep(500); // the worker's first claim found nothing; it now sleeps for its 5-minute poll
        DbTasks producer = engine(b -> b.workers(false).enqueueSignalInterval(Duration.ofSeconds(60)));
        TaskRequest request =
                TaskRequest.builder("notify.close").queue("notify-close").build();
        producer.enqueue(request); // the queue's first signal: sent in the enqueue's transaction
        assertThat(first.await(10, TimeUnit.SECONDS)).as("the first task ran").isTrue();
        Thread.sleep(500); // its claim loop found the queue empty again and sleeps
        producer.enqueue(request); // within the 60 s interval: announced by a trailing signal, due in 60 s
        assertThat(second.await(1, TimeUnit.SECONDS))
                .as("the second task waits for its signal (the worker sleeps for 5 minutes)")
                .isFalse();
        producer.close();
        assertThat(second.await(10, TimeUnit.SECONDS))
                .as("close sent the trailing signal it still owed, instead of leaving it to a timer 60 s away")
                .isTrue();
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
