package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.AttemptOutcome;
import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.Task;
import io.dbtasks.TaskFilter;
import io.dbtasks.TaskQuery;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The upgrade to history kept by day (migration V30) of a database that has tasks in every state:
 * a fresh database of its own, migrated to the version before, filled with rows as the version before wrote them,
 * then opened by an engine of this version, which migrates it to the end. Live tasks go live,
 * finished ones stay readable as the rows from before (day -1, on PostgreSQL the partition {@code
 * dbtasks_task_legacy}, on MariaDB p_legacy), keys keep refusing duplicates, and retention removes the old rows only
 * once the newest of them is older than the longest age. Run once per database.
 */
public abstract class HistoryMigrationContract extends EngineHarness {
    static final String KIND = "legacy.kind";
    private static final Duration AGE = Duration.ofDays(7);
    private static final AtomicLong H2_DATABASES = new AtomicLong();

    private HikariDataSource fresh;
    private String freshName;

    @Override
    protected DataSource dataSource() {
        return fresh != null ? fresh : super.dataSource();
    }

    /** A database of the test's own, migrated to the last version before history by day (V30). */
    @BeforeEach
    void freshDatabaseBeforeV30() throws SQLException {
        String url;
        if (database() == TestDatabase.H2) {
            freshName = "dbtasks_upgrade_" + H2_DATABASES.incrementAndGet();
            url = "jdbc:h2:mem:" + freshName + ";LOCK_TIMEOUT=10000";
        } else {
            try (Connection c = database().dataSource().getConnection();
                    Statement s = c.createStatement()) {
                String current = c.getCatalog();
                freshName = current + "_upgrade";
                s.execute("DROP DATABASE IF EXISTS " + freshName);
                s.execute("CREATE DATABASE " + freshName);
                url = database().url().replaceFirst("/" + current + "(\\?|;|$)", "/" + freshName + "$1");
            }
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(12);
        config.setPoolName("legacy-" + freshName);
        fresh = new HikariDataSource(config);
        Flyway.configure(getClass().getClassLoader())
                .dataSource(fresh)
                .table("dbtasks_schema_history")
                .locations("classpath:io/dbtasks/migration/" + dialect().name())
                .target(lastVersionBeforeV30())
                .load()
                .migrate();
    }

    /** The newest migration before V30 of the database under test (H2 and MariaDB have no V29). */
    private String lastVersionBeforeV30() {
        return database() == TestDatabase.POSTGRESQL ? "29" : "28";
    }

    @AfterEach
    @Override
    protected void stopEngines() {
        super.stopEngines();
        if (fresh == null) {
            return;
        }
        fresh.close(); // an in-memory H2 database ends with its last connection
        fresh = null;
        if (database() != TestDatabase.H2) {
            try (Connection c = database().dataSource().getConnection();
                    Statement s = c.createStatement()) {
                s.execute("DROP DATABASE IF EXISTS " + freshName);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** A task row as the version before V30 wrote it; returns its id. */
    private long insertTask(
            String status,
            String key,
            int attempt,
            int maxAttempts,
            Instant finishedAt,
            Instant leaseExpiresAt,
            Long workflowId,
            String step,
            Integer waitingFor) {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        String sql = "INSERT INTO dbtasks_task (queue, kind, idempotency_key, status, priority, attempt, max_attempts,"
                + " backoff, backoff_initial_ms, backoff_max_ms, backoff_multiplier, backoff_jitter, run_at,"
                + " lease_owner, lease_token, lease_expires_at, heartbeat_at, cancel_requested, created_at,"
                + " updated_at, started_at, finished_at, last_error, workflow_id, step, waiting_for)"
                + " VALUES ('default', ?, ?, ?, 0, ?, ?, 'FIXED', 10, 10, 1.0, 0.0, ?, ?, ?, ?, ?, FALSE, ?, ?, ?, ?,"
                + " ?, ?, ?, ?)";
        boolean running = status.equals("RUNNING");
        Instant created = finishedAt != null ? finishedAt.minusSeconds(60) : now.minusSeconds(60);
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)) {
            int i = 1;
            ps.setString(i++, KIND);
            ps.setString(i++, key);
            ps.setString(i++, status);
            ps.setInt(i++, attempt);
            ps.setInt(i++, maxAttempts);
            dialect().setInstant(ps, i++, created);
            ps.setString(i++, running ? "old-worker" : null);
            ps.setObject(i++, running ? 7L : null, java.sql.Types.BIGINT);
            dialect().setInstant(ps, i++, running ? leaseExpiresAt : null);
            dialect().setInstant(ps, i++, running ? leaseExpiresAt : null);
            dialect().setInstant(ps, i++, created);
            dialect().setInstant(ps, i++, finishedAt != null ? finishedAt : created);
            dialect().setInstant(ps, i++, attempt > 0 ? created.plusSeconds(1) : null);
            dialect().setInstant(ps, i++, finishedAt);
            ps.setString(i++, status.equals("FAILED") ? "refused" : null);
            ps.setObject(i++, workflowId, java.sql.Types.BIGINT);
            ps.setString(i++, step);
            ps.setObject(i++, waitingFor, java.sql.Types.INTEGER);
            ps.executeUpdate();
            try (ResultSet rs = ps.getGeneratedKeys()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private long insertTask(String status, String key, int attempt, int maxAttempts, Instant finishedAt) {
        return insertTask(status, key, attempt, maxAttempts, finishedAt, null, null, null, null);
    }

    /** An attempt row as the version before V30 wrote it. */
    private void insertAttempt(long taskId, int attempt, String outcome, Instant finishedAt) {
        sql(
                "INSERT INTO dbtasks_attempt (task_id, attempt, queue, worker, lease_token, started_at, finished_at,"
                        + " duration_ms, outcome, error_class, error_message, stack_trace)"
                        + " VALUES (?, ?, 'default', 'old-worker', ?, ?, ?, 5, ?, ?, ?, NULL)",
                taskId,
                attempt,
                (long) attempt,
                finishedAt.minusMillis(5),
                finishedAt,
                outcome,
                outcome.equals("SUCCEEDED") ? null : "java.lang.IllegalStateException",
                outcome.equals("SUCCEEDED") ? null : "refused");
    }

    private long insertWorkflow() {
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO dbtasks_workflow (name, created_at) VALUES ('legacy', ?)",
                        Statement.RETURN_GENERATED_KEYS)) {
            dialect().setInstant(ps, 1, Instant.now());
            ps.executeUpdate();
            try (ResultSet rs = ps.getGeneratedKeys()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Instant daysAgo(int days) {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS).minus(Duration.ofDays(days));
    }

    private DbTasks worker(boolean workers) {
        return engine(b -> b.handler(KIND, Void.class, (ctx, p) -> {})
                .queue("default", 4)
                .workers(workers)
                .retentionInterval(Duration.ZERO)
                .retention(TaskStatus.SUCCEEDED, AGE)
                .retention(TaskStatus.FAILED, AGE)
                .retention(TaskStatus.CANCELLED, AGE));
    }

    private boolean mariaDb() {
        return database() == TestDatabase.MARIADB;
    }

    /** The live partition of the task table, to read FROM. */
    private String live() {
        return mariaDb() ? "dbtasks_task PARTITION (p_live)" : "dbtasks_task_live";
    }

    /**
     * The partition of {@code table} that holds the rows from before V30, to read FROM: the old table
     * attached as a partition on PostgreSQL, the partition p_legacy on MariaDB.
     */
    private String legacy(String table) {
        return mariaDb() ? table + " PARTITION (p_legacy)" : table + "_legacy";
    }

    /** Whether {@code table} still has the partition of the rows from before V30. */
    private boolean legacyExists(String table) {
        if (mariaDb()) {
            return count(
                            "SELECT COUNT(*) FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE()"
                                    + " AND TABLE_NAME = ? AND PARTITION_NAME = 'p_legacy'",
                            table)
                    == 1;
        }
        return count("SELECT COUNT(*) FROM pg_class WHERE relname = ?", table + "_legacy") == 1;
    }

    @Test
    void tasksInEveryStateSurviveTheUpgradeAndTheOldRowsGoWhenTheNewestIsOld() {
        // Before: a workflow (a PENDING, b WAITING for it), PENDING, RUNNING under a lease that
        // expired, and finished tasks with their attempts, some keyed.
        long workflow = insertWorkflow();
        long stepA = insertTask("PENDING", null, 0, 3, null, null, workflow, "a", 0);
        long stepB = insertTask("WAITING", null, 0, 3, null, null, workflow, "b", 1);
        sql(
                "INSERT INTO dbtasks_dependency (task_id, depends_on, on_failure, satisfied) VALUES (?, ?, 'CANCEL',"
                        + " FALSE)",
                stepB,
                stepA);
        long pending = insertTask("PENDING", "legacy-pending", 0, 3, null);
        long running =
                insertTask("RUNNING", null, 1, 3, null, Instant.now().minus(Duration.ofHours(1)), null, null, null);
        Instant tenDaysAgo = daysAgo(10);
        long succeeded = insertTask("SUCCEEDED", "legacy-ok", 1, 3, tenDaysAgo);
        insertAttempt(succeeded, 1, "SUCCEEDED", tenDaysAgo);
        long failed = insertTask("FAILED", "legacy-failed", 2, 2, daysAgo(9));
        insertAttempt(failed, 1, "FAILED", daysAgo(9).minusSeconds(30));
        insertAttempt(failed, 2, "FAILED", daysAgo(9));
        long cancelled = insertTask("CANCELLED", "legacy-cancelled", 0, 3, daysAgo(1));
        long recent = insertTask("SUCCEEDED", null, 1, 3, daysAgo(3));
        insertAttempt(recent, 1, "SUCCEEDED", daysAgo(3));
        List<Long> live = List.of(stepA, stepB, pending, running);
        List<Long> old = List.of(succeeded, failed, cancelled, recent);

        DbTasks producer = worker(false); // migrates to the end

        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE history_day = 0"))
                .isEqualTo(4);
        for (long id : live) {
            assertThat(count("SELECT history_day FROM dbtasks_task WHERE id = ?", id))
                    .as("live task %s", id)
                    .isZero();
        }
        for (long id : old) {
            assertThat(count("SELECT history_day FROM dbtasks_task WHERE id = ?", id))
                    .as("finished task %s", id)
                    .isEqualTo(-1);
        }
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task_key")).isEqualTo(4);
        if (dialect().partitionsHistory()) {
            assertThat(count("SELECT COUNT(*) FROM " + live())).isEqualTo(4);
            assertThat(count("SELECT COUNT(*) FROM " + legacy("dbtasks_task"))).isEqualTo(4);
            assertThat(count("SELECT COUNT(*) FROM " + legacy("dbtasks_attempt")))
                    .isEqualTo(4);
        }

        // Finished tasks read as before, by id, by state, by key.
        Task ok = producer.find(succeeded).orElseThrow();
        assertThat(ok.status()).isEqualTo(TaskStatus.SUCCEEDED);
        assertThat(ok.finishedAt()).isEqualTo(tenDaysAgo);
        assertThat(producer.attempts(succeeded)).hasSize(1);
        Task bad = producer.find(failed).orElseThrow();
        assertThat(bad.status()).isEqualTo(TaskStatus.FAILED);
        assertThat(bad.lastError()).isEqualTo("refused");
        assertThat(producer.attempts(failed))
                .extracting(io.dbtasks.Attempt::outcome)
                .containsExactly(AttemptOutcome.FAILED, AttemptOutcome.FAILED);
        assertThat(producer.find(cancelled)).map(Task::status).contains(TaskStatus.CANCELLED);
        assertThat(producer.findByKey("legacy-ok")).map(Task::id).contains(succeeded);
        assertThat(producer.search(
                                TaskQuery.builder().status(TaskStatus.SUCCEEDED).build(), 10)
                        .items())
                .extracting(Task::id)
                .containsExactly(Math.max(succeeded, recent), Math.min(succeeded, recent));
        assertThat(producer.search(TaskQuery.builder().status(TaskStatus.FAILED).build(), 10)
                        .items())
                .extracting(Task::id)
                .containsExactly(failed);
        assertThat(producer.list(new TaskFilter(TaskStatus.CANCELLED, null, null), 0, 10)
                        .items())
                .extracting(Task::id)
                .containsExactly(cancelled);
        assertThat(producer.count(TaskQuery.builder().kind(KIND).build())).isEqualTo(8);
        assertThat(producer.search(
                                TaskQuery.builder().status(TaskStatus.WAITING).build(), 10)
                        .items())
                .extracting(Task::id)
                .containsExactly(stepB);

        // The key of a finished task from before still refuses a duplicate.
        EnqueueResult duplicate = producer.enqueue(
                TaskRequest.builder(KIND).idempotencyKey("legacy-ok").build());
        assertThat(duplicate.duplicate()).isTrue();
        assertThat(duplicate.task().id()).isEqualTo(succeeded);
        EnqueueResult livePending = producer.enqueue(
                TaskRequest.builder(KIND).idempotencyKey("legacy-pending").build());
        assertThat(livePending.duplicate()).isTrue();
        assertThat(livePending.task().id()).isEqualTo(pending);

        // A retry of a failed task from before moves it to the live tasks.
        Task retried = producer.retry(failed, 1);
        assertThat(retried.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(count("SELECT history_day FROM dbtasks_task WHERE id = ?", failed))
                .isZero();
        if (dialect().partitionsHistory()) {
            assertThat(count("SELECT COUNT(*) FROM " + live() + " WHERE id = ?", failed))
                    .isEqualTo(1);
        }

        // Workers run the live tasks, rescue the RUNNING one whose lease expired, and run the retry.
        DbTasks tasks = worker(true);
        tasks.start();
        for (long id : List.of(stepA, stepB, pending, running, failed)) {
            awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
        }
        assertThat(tasks.attempts(running))
                .extracting(io.dbtasks.Attempt::outcome)
                .containsExactly(AttemptOutcome.LEASE_EXPIRED, AttemptOutcome.SUCCEEDED);
        assertThat(tasks.attempts(failed)).hasSize(3);
        long today = count("SELECT " + dialect().historyDay(dialect().now()));
        for (long id : List.of(stepA, stepB, pending, running, failed)) {
            assertThat(count("SELECT history_day FROM dbtasks_task WHERE id = ?", id))
                    .as("task %s finished today", id)
                    .isEqualTo(today);
        }

        // Retention: the newest row from before finished a day ago, so none of them goes where
        // they are one partition; where they are rows, each goes by its own age.
        assertThat(tasks.sweepRetention()).isEqualTo(dialect().partitionsHistory() ? 0 : 1);
        if (dialect().partitionsHistory()) {
            assertThat(tasks.find(succeeded))
                    .as("kept with the newest of its partition")
                    .isPresent();
            assertThat(legacyExists("dbtasks_task")).isTrue();
        } else {
            assertThat(tasks.find(succeeded)).isEmpty();
        }
        assertThat(tasks.find(cancelled)).isPresent();
        assertThat(tasks.find(recent)).isPresent();

        // Once the newest is older than the longest age, all of them go, the keys with them.
        sql(
                "UPDATE dbtasks_task SET finished_at = ? WHERE history_day = -1 AND finished_at > ?",
                daysAgo(8),
                daysAgo(8));
        assertThat(tasks.sweepRetention()).isEqualTo(dialect().partitionsHistory() ? 3 : 2);
        for (long id : List.of(succeeded, cancelled, recent)) {
            assertThat(tasks.find(id)).as("task %s", id).isEmpty();
        }
        if (dialect().partitionsHistory()) {
            assertThat(legacyExists("dbtasks_task")).isFalse();
            assertThat(legacyExists("dbtasks_attempt")).isFalse();
        }
        assertThat(count("SELECT COUNT(*) FROM dbtasks_attempt WHERE task_id IN (?, ?)", succeeded, recent))
                .isZero();
        for (long id : List.of(stepA, stepB, pending, running, failed)) {
            assertThat(tasks.find(id)).map(Task::status).contains(TaskStatus.SUCCEEDED);
        }
        EnqueueResult reused = tasks.enqueue(TaskRequest.builder(KIND)
                .idempotencyKey("legacy-ok")
                .runAfter(Duration.ofHours(1))
                .build());
        assertThat(reused.duplicate()).isFalse();
        assertThat(reused.task().id()).isNotEqualTo(succeeded);
        EnqueueResult stillKeyed = tasks.enqueue(
                TaskRequest.builder(KIND).idempotencyKey("legacy-failed").build());
        assertThat(stillKeyed.duplicate()).as("the retried task keeps its key").isTrue();
        assertThat(stillKeyed.task().id()).isEqualTo(failed);
    }

    @Test
    void theCountedHoursOfRowsFromBeforeThatFinishedOnADayDroppedWithThemLeaveWithThem() {
        // Early yesterday (UTC): the first day with a partition of its own after V30, whose end is
        // more than the hour kept ago, so it is dropped in the same sweep.
        countedHoursLeaveWithTheRows(Instant.now()
                .truncatedTo(ChronoUnit.DAYS)
                .minus(Duration.ofDays(1))
                .plus(Duration.ofMinutes(30)));
    }

    @Test
    void theCountedHoursOfRowsFromBeforeThatFinishedOnADayStillKeptLeaveWithThem() {
        // Two hours before the current one, today (UTC): an hour closed and counted, older than the
        // hour kept, on a day whose partition stays.
        Instant finished = Instant.now()
                .truncatedTo(ChronoUnit.HOURS)
                .minus(Duration.ofHours(2))
                .plusSeconds(60);
        org.junit.jupiter.api.Assumptions.assumeTrue(
                historyDay(finished) == historyDay(Instant.now()), "less than two hours since midnight UTC");
        countedHoursLeaveWithTheRows(finished);
    }

    /**
     * Rows finished at {@code finishedAt} before the upgrade, counted in their closed hours, then
     * removed by retention (every state kept one hour): the overview counts them no more.
     */
    private void countedHoursLeaveWithTheRows(Instant yesterday) {
        long first = insertTask("SUCCEEDED", "legacy-a", 1, 3, yesterday);
        long second = insertTask("FAILED", null, 1, 1, yesterday.plusSeconds(60));
        long pending = insertTask("PENDING", null, 0, 3, null);
        DbTasks tasks = engine(b -> b.workers(false)
                .retentionInterval(Duration.ZERO)
                .retention(TaskStatus.SUCCEEDED, Duration.ofHours(1))
                .retention(TaskStatus.FAILED, Duration.ofHours(1))
                .retention(TaskStatus.CANCELLED, Duration.ofHours(1)));
        assertThat(tasks.countHistory(1_000)).as("hours counted").isPositive();
        assertThat(finishedCounts(tasks))
                .containsEntry(TaskStatus.SUCCEEDED, 1L)
                .containsEntry(TaskStatus.FAILED, 1L);

        assertThat(tasks.sweepRetention()).isEqualTo(2);

        assertThat(tasks.find(first)).isEmpty();
        assertThat(tasks.find(second)).isEmpty();
        assertThat(tasks.find(pending)).map(Task::status).contains(TaskStatus.PENDING);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status IN ('SUCCEEDED', 'FAILED')"))
                .isZero();
        assertThat(finishedCounts(tasks))
                .as("the overview's counts of finished tasks")
                .isEmpty();
    }

    /** The overview's counts of finished tasks by state, leaving out zeros. */
    private static java.util.Map<TaskStatus, Long> finishedCounts(DbTasks tasks) {
        java.util.Map<TaskStatus, Long> out = new java.util.EnumMap<>(TaskStatus.class);
        for (io.dbtasks.QueueStateCount s : tasks.stateCounts()) {
            if (s.status().isFinal() && s.count() > 0) {
                out.merge(s.status(), s.count(), Long::sum);
            }
        }
        return out;
    }
}
