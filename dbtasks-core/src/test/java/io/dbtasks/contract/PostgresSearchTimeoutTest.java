package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskQuery;
import io.dbtasks.TaskRequest;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A search or a count runs for as long as its own timeout allows, even past the engine's statement
 * timeout: that one bounds the engine's own work, the query's timeout the search.
 */
class PostgresSearchTimeoutTest extends EngineHarness {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Test
    void aSearchMayRunForItsOwnTimeoutPastTheEnginesStatementTimeout() throws Exception {
        DbTasks tasks = engine(b -> b.workers(false).statementTimeout(Duration.ofSeconds(1)));
        tasks.enqueue(TaskRequest.builder("search.slow").build());
        TaskQuery query = TaskQuery.builder()
                .kind("search.slow")
                .timeout(Duration.ofSeconds(20))
                .build();
        try (Connection lock = dataSource().getConnection()) {
            lock.setAutoCommit(false);
            try (Statement s = lock.createStatement()) {
                s.execute("LOCK TABLE dbtasks_task IN ACCESS EXCLUSIVE MODE");
            }
            CompletableFuture<Long> count = CompletableFuture.supplyAsync(() -> tasks.count(query));
            Thread.sleep(3_000); // three statement timeouts: the search waits for the lock meanwhile
            lock.rollback();
            assertThat(count.get(20, TimeUnit.SECONDS)).isEqualTo(1);
        }
    }

    @Test
    void aCountByQueueMayRunForItsOwnTimeoutPastTheEnginesStatementTimeout() throws Exception {
        DbTasks tasks = engine(b -> b.workers(false).statementTimeout(Duration.ofSeconds(1)));
        tasks.enqueue(TaskRequest.builder("search.slow").queue("search-slow").build());
        // By queue alone: answered from the overview's counts, not by a search statement.
        TaskQuery query = TaskQuery.builder()
                .queue("search-slow")
                .timeout(Duration.ofSeconds(20))
                .build();
        try (Connection lock = dataSource().getConnection()) {
            lock.setAutoCommit(false);
            try (Statement s = lock.createStatement()) {
                s.execute("LOCK TABLE dbtasks_task IN ACCESS EXCLUSIVE MODE");
            }
            CompletableFuture<Long> count = CompletableFuture.supplyAsync(() -> tasks.count(query));
            Thread.sleep(3_000); // three statement timeouts: the count waits for the lock meanwhile
            lock.rollback();
            assertThat(count.get(20, TimeUnit.SECONDS)).isEqualTo(1);
        }
    }
}
