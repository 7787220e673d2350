package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.TaskRequest;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL only: the idempotency key's unique index is partial (migration V12, keyed tasks only),
 * so keyless tasks pay no entry in it, and keyed enqueues still find duplicates both against it and
 * against the whole-column constraint of the schema before V12, so an instance of this version runs
 * during an upgrade on either.
 */
class PostgresKeyIndexTest extends EngineHarness {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Test
    void keyIndexIsPartialAndKeyedEnqueuesStillFindDuplicates() {
        DbTasks tasks = producer();
        assertThat(
                        count(
                                "SELECT COUNT(*) FROM pg_indexes WHERE tablename = 'dbtasks_task'"
                                        + " AND indexname = 'dbtasks_task_key_idx' AND indexdef LIKE '%WHERE (idempotency_key IS NOT NULL)%'"))
                .isEqualTo(1);
        assertThat(count("SELECT COUNT(*) FROM pg_constraint WHERE conname = 'dbtasks_task_key_unique'"))
                .isZero();
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
    }

    @Test
    void keyedEnqueuesStillFindDuplicatesUnderTheWholeColumnConstraintOfBeforeV12() throws Exception {
        DbTasks tasks = producer();
        try (Connection c = database().dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                // The schema before V12, in this transaction only (rolled back below). It locks the task
                // table until then; no other test runs meanwhile (the suite is not parallel).
                s.execute("DROP INDEX dbtasks_task_key_idx");
                s.execute("ALTER TABLE dbtasks_task ADD CONSTRAINT dbtasks_task_key_unique UNIQUE (idempotency_key)");
            }
            EnqueueResult first = tasks.enqueue(
                    c,
                    TaskRequest.builder("key.index")
                            .idempotencyKey("old-schema")
                            .build());
            EnqueueResult again = tasks.enqueue(
                    c,
                    TaskRequest.builder("key.index")
                            .idempotencyKey("old-schema")
                            .build());
            assertThat(first.duplicate()).isFalse();
            assertThat(again.duplicate()).isTrue();
            assertThat(again.task().id()).isEqualTo(first.task().id());
            c.rollback();
        }
        assertThat(count("SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'dbtasks_task_key_idx'"))
                .isEqualTo(1);
    }
}
