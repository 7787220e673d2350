package io.dbtasks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/**
 * On H2 the tables must keep accepting tasks after the connection that created them is gone: a
 * DataSource without a pool closes every connection after use, and a pool retires its connections
 * (HikariCP after {@code maxLifetime}), so the session that ran the migrations is closed long before
 * the last task is enqueued.
 */
class H2ConnectionTurnoverTest {

    record Note(String text) {}

    @Test
    void tasksAreStoredAndRunOnAnUnpooledDataSource() {
        JdbcDataSource dataSource = new JdbcDataSource();
        dataSource.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        enqueueAndRun(dataSource);
    }

    @Test
    void tasksAreStoredAndRunAfterThePoolReplacedItsConnections() {
        try (HikariDataSource dataSource = new HikariDataSource()) {
            dataSource.setJdbcUrl("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
            try (DbTasks tasks = DbTasks.builder(dataSource)
                    .handler("note", Note.class, (ctx, note) -> {})
                    .build()) {
                // The migrations ran; now every connection the pool holds is retired and replaced.
                dataSource.getHikariPoolMXBean().softEvictConnections();
            }
            enqueueAndRun(dataSource);
        }
    }

    private static void enqueueAndRun(DataSource dataSource) {
        try (DbTasks tasks = DbTasks.builder(dataSource)
                .queue("default", 2)
                .handler("note", Note.class, (ctx, note) -> {})
                .build()) {
            tasks.start();
            long id = tasks.enqueue(TaskRequest.builder("note")
                            .payload(new Note("kept"))
                            .build())
                    .task()
                    .id();
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> tasks.find(id).orElseThrow().status() == TaskStatus.SUCCEEDED);
            assertThat(tasks.find(id).orElseThrow().attempt()).isEqualTo(1);
        }
    }
}
