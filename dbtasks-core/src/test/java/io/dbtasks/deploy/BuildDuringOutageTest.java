package io.dbtasks.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.DbTasksException;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.testing.OwnMariaDb;
import io.dbtasks.testing.OwnPostgres;
import io.dbtasks.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * An application that starts while its database is down: building the engine succeeds, enqueues
 * fail at once with a clear error, health is DOWN, and once the database accepts connections the
 * schema is migrated and the workers run what is enqueued. Each test runs its own server, stopped
 * before the engine is built (never the shared ones).
 */
class BuildDuringOutageTest {
    private static final String KIND = "outage.build";
    private static final String DATABASE = "dbtasks_build_outage";

    /** Starts and stops one private server. */
    private interface Server {
        void stop() throws Exception;

        void start() throws Exception;
    }

    @Test
    void anEngineBuiltWhilePostgresIsDownStartsWhenItReturns() throws Exception {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "PostgreSQL is not in dbtasks.test.databases");
        try (OwnPostgres pg = OwnPostgres.start(List.of())) {
            pg.createDatabase(DATABASE);
            buildDuringOutageThenRecover(pg.url(DATABASE), new Server() {
                @Override
                public void stop() throws Exception {
                    pg.stop("fast");
                }

                @Override
                public void start() throws Exception {
                    pg.startServer();
                }
            });
        }
    }

    @Test
    void anEngineBuiltWhileMariaDbIsDownStartsWhenItReturns() throws Exception {
        Assumptions.assumeTrue(TestDatabase.MARIADB.required(), "MariaDB is not in dbtasks.test.databases");
        try (OwnMariaDb maria = OwnMariaDb.start()) {
            maria.createDatabase(DATABASE);
            buildDuringOutageThenRecover(maria.url(DATABASE), new Server() {
                @Override
                public void stop() throws Exception {
                    maria.stopServer();
                }

                @Override
                public void start() throws Exception {
                    maria.startServer();
                }
            });
        }
    }

    private void buildDuringOutageThenRecover(String url, Server server) throws Exception {
        server.stop();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(4);
        config.setConnectionTimeout(1_000);
        config.setInitializationFailTimeout(-1); // the pool starts without the database, as the server's
        AtomicInteger runs = new AtomicInteger();
        try (HikariDataSource pool = new HikariDataSource(config)) {
            DbTasks tasks = DbTasks.builder(pool)
                    .workerId("built-during-outage")
                    .pollInterval(Duration.ofMillis(100))
                    .shutdownTimeout(Duration.ofSeconds(2))
                    .queue(DbTasks.DEFAULT_QUEUE, 2)
                    .handler(KIND, Void.class, (ctx, payload) -> runs.incrementAndGet())
                    .build();
            try (tasks) {
                tasks.start();
                assertThat(tasks.health().healthy())
                        .as("health while the database is down")
                        .isFalse();
                assertThat(tasks.health().lastFailure()).isNotBlank();
                long before = System.nanoTime();
                assertThatThrownBy(() -> tasks.enqueue(TaskRequest.of(KIND, null)))
                        .isInstanceOf(DbTasksException.class)
                        .hasMessageContaining("database");
                assertThat(Duration.ofNanos(System.nanoTime() - before))
                        .as("an enqueue during the outage fails, it does not hang")
                        .isLessThan(Duration.ofSeconds(10));

                server.start();
                await().atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(100))
                        .ignoreExceptionsInstanceOf(DbTasksException.class)
                        .alias("an enqueue once the database is back")
                        .until(() -> tasks.enqueue(TaskRequest.of(KIND, null)) != null);
                await().atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(50))
                        .alias("the task run by the workers started during the outage")
                        .until(() -> tasks.stats().tasks().getOrDefault(TaskStatus.SUCCEEDED, 0L) == 1);
                assertThat(runs.get()).isEqualTo(1);
                assertThat(tasks.dialect()).isIn("postgresql", "mariadb");
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> tasks.health().healthy());
            }
        }
    }
}
