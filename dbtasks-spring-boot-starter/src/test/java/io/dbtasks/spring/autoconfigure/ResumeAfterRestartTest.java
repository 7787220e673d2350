package io.dbtasks.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.spring.KindHandler;
import io.dbtasks.testing.OwnMariaDb;
import io.dbtasks.testing.OwnPostgres;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import javax.sql.DataSource;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Work resumes within a second of a stopped and restarted database accepting connections again,
 * with the pool settings of dbtasks-server (Spring Boot's HikariCP, the values of its
 * application.yml) and dbtasks' defaults. Each cycle: a task due during the outage waits; the
 * database (a private server) is stopped for 12 s, long enough for HikariCP's backoff between
 * connection attempts to reach its 5 s cap, and started again; the time from the first accepted
 * connection (a probe every 5 ms) to the task's SUCCEEDED (read every 10 ms) is measured. Five
 * cycles; the median must be under 1 s.
 */
class ResumeAfterRestartTest {
    private static final String KIND = "resume.after.restart";
    private static final String DATABASE = "dbtasks_resume";
    /** Restarts per database; the median is asserted ({@code -Ddbtasks.test.resume.cycles}, default 3). */
    private static final int CYCLES = Integer.getInteger("dbtasks.test.resume.cycles", 3);

    private static final Duration OUTAGE = Duration.ofSeconds(12);

    /** Starts and stops one private server. */
    private interface Server {
        void stop() throws Exception;

        void start() throws Exception;
    }

    @Test
    void workResumesWithinASecondOfARestartedPostgres() throws Exception {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "PostgreSQL is not in dbtasks.test.databases");
        try (OwnPostgres pg = OwnPostgres.start(List.of())) {
            pg.createDatabase(DATABASE);
            org.postgresql.ds.PGSimpleDataSource direct = new org.postgresql.ds.PGSimpleDataSource();
            direct.setURL(pg.url(DATABASE));
            direct.setConnectTimeout(2);
            measure("postgresql", pg.url(DATABASE), direct, new Server() {
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
    void workResumesWithinASecondOfARestartedMariaDb() throws Exception {
        Assumptions.assumeTrue(TestDatabase.MARIADB.required(), "MariaDB is not in dbtasks.test.databases");
        try (OwnMariaDb maria = OwnMariaDb.start()) {
            maria.createDatabase(DATABASE);
            DataSource direct = new org.mariadb.jdbc.MariaDbDataSource(maria.url(DATABASE) + "&connectTimeout=2000");
            measure("mariadb", maria.url(DATABASE), direct, new Server() {
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

    private void measure(String name, String url, DataSource direct, Server server) throws Exception {
        // The producer reads and writes over connections of its own, never the pool under test.
        DbTasks producer = DbTasks.builder(direct).workers(false).build();
        List<Long> resumes = new ArrayList<>();
        try (producer) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(
                            DataSourceAutoConfiguration.class,
                            DbTasksPoolAutoConfiguration.class,
                            DbTasksAutoConfiguration.class))
                    .withPropertyValues(ServerPoolDefaults.with("spring.datasource.url=" + url))
                    .withPropertyValues(System.getProperty("dbtasks.test.resume.extra", "dbtasks.enabled=true"))
                    .withBean("work", KindHandler.class, () -> KindHandler.of(KIND, Void.class, (ctx, payload) -> {}))
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        DbTasks worker = context.getBean(DbTasks.class);
                        long warm = producer.enqueue(TaskRequest.of(KIND, null))
                                .task()
                                .id();
                        awaitSucceeded(producer, warm, Duration.ofSeconds(30));
                        for (int cycle = 1; cycle <= CYCLES; cycle++) {
                            resumes.add(cycle(producer, url, server));
                        }
                        assertThat(worker.isRunning()).isTrue();
                    });
        }
        List<Long> sorted = new ArrayList<>(resumes);
        sorted.sort(null);
        long median = sorted.get(CYCLES / 2);
        System.out.println("Resume after a restart of " + name + " (ms from the first accepted connection to the"
                + " first task SUCCEEDED), cycles " + resumes + ", median " + median);
        assertThat(median)
                .as("median ms from %s accepting connections to the first completed task, cycles %s", name, resumes)
                .isLessThan(1_000);
    }

    /** One outage: returns the ms from the database accepting connections to the task's success. */
    private long cycle(DbTasks producer, String url, Server server) throws Exception {
        long id = producer.enqueue(TaskRequest.builder(KIND)
                        .runAfter(Duration.ofSeconds(3))
                        .build())
                .task()
                .id();
        long stopped = System.nanoTime();
        server.stop();
        Thread.sleep(Math.max(0, OUTAGE.toMillis() - (System.nanoTime() - stopped) / 1_000_000));
        CompletableFuture<Void> starting = CompletableFuture.runAsync(() -> {
            try {
                server.start();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        long accepted = awaitAccepting(url, starting);
        long succeeded = awaitSucceeded(producer, id, Duration.ofSeconds(60));
        starting.get();
        return (succeeded - accepted) / 1_000_000;
    }

    /** @return when a new connection to {@code url} first succeeded ({@link System#nanoTime()}) */
    private static long awaitAccepting(String url, CompletableFuture<Void> starting) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (System.nanoTime() < deadline) {
            try (Connection c = DriverManager.getConnection(url)) {
                return System.nanoTime();
            } catch (java.sql.SQLException e) {
                if (starting.isCompletedExceptionally()) {
                    starting.get();
                }
                Thread.sleep(5);
            }
        }
        throw new AssertionError("the database did not accept connections within 3 minutes");
    }

    /** @return when the task was first seen SUCCEEDED ({@link System#nanoTime()}) */
    private static long awaitSucceeded(DbTasks producer, long id, Duration patience) throws Exception {
        long deadline = System.nanoTime() + patience.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (producer.find(id).orElseThrow().status() == TaskStatus.SUCCEEDED) {
                    return System.nanoTime();
                }
            } catch (io.dbtasks.DbTasksException e) {
                // the producer's own connection is still refused
            }
            Thread.sleep(10);
        }
        throw new AssertionError("task " + id + " did not succeed within " + patience);
    }

    /** The pool settings of dbtasks-server's application.yml that matter here. */
    static final class ServerPoolDefaults {
        static String[] with(String... more) {
            List<String> all = new ArrayList<>(List.of(
                    "spring.datasource.hikari.connection-timeout=5000",
                    "spring.datasource.hikari.initialization-fail-timeout=-1",
                    "dbtasks.queues.default=4",
                    "dbtasks.shutdown-timeout=2s"));
            all.addAll(List.of(more));
            return all.toArray(String[]::new);
        }
    }
}
