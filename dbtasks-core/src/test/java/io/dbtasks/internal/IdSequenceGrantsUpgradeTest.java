package io.dbtasks.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.internal.dialect.Dialects;
import io.dbtasks.limit.Limit;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An application user that is not the schema's owner and enqueues with table privileges only (all a
 * PostgreSQL identity column needs) keeps enqueueing, creating workflows, batches and jobs once the
 * ids become sequence defaults (migration V25), counts history in the tables V27 adds, and claims
 * within limits, which reads and writes the tables of limits and fairness. The
 * schema is a private one, first on the pools' search path, migrated to V20 (the last before V25)
 * before the grants, then to the end.
 */
class IdSequenceGrantsUpgradeTest {
    private static final String SCHEMA = "id_grants_probe";
    private static final String NOT_OWNER = "dbtasks_not_owner";

    @BeforeEach
    void grantsOnASchemaBeforeV25() throws SQLException {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "PostgreSQL is not in dbtasks.test.databases");
        dropProbe();
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + SCHEMA);
            s.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '" + NOT_OWNER + "')"
                    + " THEN CREATE ROLE " + NOT_OWNER + " LOGIN; END IF; END $$");
        }
        try (HikariDataSource owner = pool(null)) {
            Flyway.configure(getClass().getClassLoader())
                    .dataSource(owner)
                    .table("dbtasks_schema_history")
                    .locations("classpath:io/dbtasks/migration/postgresql")
                    .target("20")
                    .load()
                    .migrate();
            try (Connection c = owner.getConnection();
                    Statement s = c.createStatement()) {
                s.execute("GRANT USAGE ON SCHEMA " + SCHEMA + " TO " + NOT_OWNER);
                s.execute(
                        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + SCHEMA + " TO " + NOT_OWNER);
                s.execute("GRANT USAGE, SELECT, UPDATE ON SEQUENCE " + SCHEMA + ".dbtasks_token_seq TO " + NOT_OWNER);
            }
            Engine.migrate(owner, Dialects.detect(owner));
        }
    }

    @AfterEach
    void dropProbe() throws SQLException {
        if (!TestDatabase.POSTGRESQL.required()) {
            return;
        }
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
        }
    }

    @Test
    void aUserThatEnqueuedBeforeTheMigrationEnqueuesAfterIt() {
        try (HikariDataSource app = pool(NOT_OWNER);
                DbTasks tasks =
                        DbTasks.builder(app).migrate(false).workers(false).build()) {
            long id = tasks.enqueue(TaskRequest.builder("probe").build()).task().id();
            assertThat(id).as("a task id drawn after V25").isGreaterThan(1L << 40);
            assertThat(tasks.enqueueAll(java.util.List.of(
                                    TaskRequest.builder("probe").build(),
                                    TaskRequest.builder("probe").build()))
                            .size())
                    .isEqualTo(2);
        }
    }

    @Test
    void aUserThatReadAndSettledTasksBeforeTheMigrationCountsHistoryAfterIt() throws SQLException {
        try (HikariDataSource owner = pool(null);
                Connection c = owner.getConnection();
                Statement s = c.createStatement()) {
            // A task that finished three hours ago: its hour is closed and can be counted.
            s.execute("INSERT INTO dbtasks_task (queue, kind, status, attempt, max_attempts, backoff,"
                    + " backoff_initial_ms, backoff_max_ms, backoff_multiplier, backoff_jitter, run_at, created_at,"
                    + " updated_at, finished_at) VALUES ('default', 'probe', 'SUCCEEDED', 1, 3, 'FIXED', 1000, 1000,"
                    + " 1.0, 0.0, now(), now(), now(), now() - INTERVAL '3 hours')");
        }
        try (HikariDataSource app = pool(NOT_OWNER);
                DbTasks tasks =
                        DbTasks.builder(app).migrate(false).workers(false).build()) {
            assertThat(tasks.countHistory(10)).as("hours counted").isEqualTo(1);
            assertThat(tasks.stateCounts())
                    .anyMatch(q -> q.queue().equals("default")
                            && q.status() == io.dbtasks.TaskStatus.SUCCEEDED
                            && q.count() == 1);
        }
    }

    record Probe(int n) {}

    @Test
    void aUserThatClaimedBeforeTheMigrationClaimsWithinLimitsAfterIt() throws SQLException {
        try (HikariDataSource app = pool(NOT_OWNER);
                DbTasks tasks = DbTasks.builder(app)
                        .migrate(false)
                        .queue("default", 2)
                        .handler("probe", Probe.class, (ctx, p) -> {})
                        .build()) {
            // Every claim reads the queue's limits, fair queues and rates; with a limit far above the
            // claim batch, claims after the first one claim within the queue's bound.
            tasks.limits().set(Limit.maxRunning("default", Limit.EVERY_KEY, 100));
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                ids.add(tasks.enqueue(TaskRequest.builder("probe")
                                .payload(new Probe(i))
                                .concurrencyKey("tenant-" + i % 2)
                                .build())
                        .task()
                        .id());
            }
            try (Connection c = app.getConnection();
                    Statement s = c.createStatement();
                    java.sql.ResultSet rs = s.executeQuery("SELECT has_table_privilege('dbtasks_fair_queue', 'SELECT'),"
                            + " has_table_privilege('dbtasks_queue_rate', 'UPDATE'),"
                            + " has_table_privilege('dbtasks_queue_running', 'INSERT'),"
                            + " has_table_privilege('dbtasks_queue_running', 'DELETE'),"
                            + " has_sequence_privilege('dbtasks_key_claim_seq', 'USAGE')")) {
                rs.next();
                for (int i = 1; i <= 5; i++) {
                    assertThat(rs.getBoolean(i))
                            .as("privilege " + i + " of the claims' tables")
                            .isTrue();
                }
            }
            tasks.start();
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> ids.stream()
                            .allMatch(id -> tasks.find(id).orElseThrow().status() == io.dbtasks.TaskStatus.SUCCEEDED));
        }
    }

    private static HikariDataSource pool(String user) {
        String url = TestDatabase.POSTGRESQL.url();
        if (user != null) {
            url = url.matches(".*[?&]user=.*")
                    ? url.replaceAll("([?&])user=[^&]*", "$1user=" + user)
                    : url + (url.contains("?") ? "&" : "?") + "user=" + user;
        }
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url + (url.contains("?") ? "&" : "?") + "currentSchema=" + SCHEMA);
        c.setMaximumPoolSize(2);
        c.setPoolName("id-grants-probe");
        return new HikariDataSource(c);
    }
}
