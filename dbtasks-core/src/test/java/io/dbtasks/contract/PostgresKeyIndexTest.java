package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.testing.TestDatabase;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL only: the task table is partitioned by history day, so no unique index on it can hold
 * the idempotency key alone; the key table ({@code dbtasks_task_key}) does. The task table's own key
 * index is partial (keyed tasks only) and not unique, for lookups; a key stays taken while its task
 * lives in any partition and is free again once the task is deleted.
 */
class PostgresKeyIndexTest extends EngineHarness {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Test
    void keyIndexIsPartialAndNotUniqueAndTheKeyTableHoldsEachKeyOnce() {
        DbTasks tasks = producer();
        assertThat(count("SELECT COUNT(*) FROM pg_indexes WHERE tablename = 'dbtasks_task'"
                        + " AND indexname = 'dbtasks_task_key_idx' AND indexdef LIKE '%WHERE (idempotency_key IS NOT NULL)%'"
                        + " AND indexdef NOT LIKE 'CREATE UNIQUE%'"))
                .isEqualTo(1);
        for (int i = 0; i < 3; i++) {
            tasks.enqueue(TaskRequest.builder("key.index").build());
        }
        EnqueueResult first = tasks.enqueue(
                TaskRequest.builder("key.index").idempotencyKey("k-1").build());
        EnqueueResult again = tasks.enqueue(
                TaskRequest.builder("key.index").idempotencyKey("k-1").build());
        assertThat(again.duplicate()).isTrue();
        assertThat(again.task().id()).isEqualTo(first.task().id());
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(4);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task_key")).isEqualTo(1);
    }

    @Test
    void aFinishedTaskKeepsItsKeyInItsDayPartitionAndADeletedOneFreesIt() {
        DbTasks tasks = engine(b -> b.handler("key.index", Void.class, (ctx, p) -> {}));
        long id = tasks.enqueue(
                        TaskRequest.builder("key.index").idempotencyKey("k-2").build())
                .task()
                .id();
        tasks.start();
        awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task_live WHERE id = ?", id))
                .as("moved out of the live partition")
                .isZero();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE id = ? AND history_day > 0", id))
                .isEqualTo(1);

        EnqueueResult again = tasks.enqueue(
                TaskRequest.builder("key.index").idempotencyKey("k-2").build());
        assertThat(again.duplicate())
                .as("the key of a finished task is still taken")
                .isTrue();
        assertThat(again.task().id()).isEqualTo(id);

        tasks.delete(id);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task_key WHERE idempotency_key = 'k-2'"))
                .isZero();
        EnqueueResult fresh = tasks.enqueue(
                TaskRequest.builder("key.index").idempotencyKey("k-2").build());
        assertThat(fresh.duplicate()).isFalse();
        assertThat(fresh.task().id()).isNotEqualTo(id);
    }
}
