package io.dbtasks.spring.actuator;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.limit.Limit;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** The per-key gauges of queues with limits: running and waiting tasks of each concurrency key. */
class KeyGaugesTest {
    @Test
    void eachKeyOfAQueueWithLimitsHasRunningAndWaitingGauges() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:keys" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        try (DbTasks tasks = DbTasks.builder(ds).workers(false).build()) {
            tasks.limits().set(Limit.maxRunning("limited", Limit.EVERY_KEY, 2));
            for (int i = 0; i < 3; i++) {
                tasks.enqueue(TaskRequest.builder("k")
                        .queue("limited")
                        .concurrencyKey("tenant-a")
                        .build());
            }
            tasks.enqueue(TaskRequest.builder("k")
                    .queue("free")
                    .concurrencyKey("tenant-b")
                    .build());
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            DbTasksQueueGauges gauges = new DbTasksQueueGauges(tasks, registry, Duration.ofSeconds(1));
            gauges.refresh();

            assertThat(registry.get(DbTasksQueueGauges.KEY_TASKS)
                            .tags("queue", "limited", "key", "tenant-a", "state", "waiting")
                            .gauge()
                            .value())
                    .isEqualTo(3);
            assertThat(registry.get(DbTasksQueueGauges.KEY_TASKS)
                            .tags("queue", "limited", "key", "tenant-a", "state", "running")
                            .gauge()
                            .value())
                    .isZero();
            assertThat(registry.find(DbTasksQueueGauges.KEY_TASKS)
                            .tags("queue", "free")
                            .gauges())
                    .as("a queue without limits has no key gauges")
                    .isEmpty();

            tasks.limits().remove("limited", Limit.EVERY_KEY);
            gauges.refresh();
            assertThat(registry.get(DbTasksQueueGauges.KEY_TASKS)
                            .tags("queue", "limited", "key", "tenant-a", "state", "waiting")
                            .gauge()
                            .value())
                    .as("a queue whose limits are gone reads 0")
                    .isZero();
        }
    }
}
