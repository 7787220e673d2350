package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.QueueStateCount;
import io.dbtasks.Task;
import io.dbtasks.TaskQuery;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.dialect.Dialects;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/**
 * Base of the contract suite: each concrete subclass names one database, and every test runs
 * against it with empty tables. Engines built with {@link #engine} are stopped after each test;
 * latches made with {@link #latch()} are opened first, so a handler blocked on one does not hold up
 * the shutdown.
 */
public abstract class EngineHarness {
    /** How long any awaited state change may take before the test fails. */
    protected static final Duration PATIENCE = Duration.ofSeconds(15);

    protected final List<DbTasks> engines = new ArrayList<>();
    private final List<CountDownLatch> latches = new ArrayList<>();
    private Dialect dialect;

    protected abstract TestDatabase database();

    @BeforeEach
    protected void prepareDatabase() {
        Assumptions.assumeTrue(database().required(), database() + " is not in dbtasks.test.databases");
        // Migrate (idempotent) and empty the tables.
        DbTasks.builder(database().dataSource()).workers(false).build().close();
        database().clear();
        dialect = Dialects.detect(database().dataSource());
    }

    @AfterEach
    protected void stopEngines() {
        synchronized (latches) {
            latches.forEach(l -> {
                while (l.getCount() > 0) {
                    l.countDown();
                }
            });
            latches.clear();
        }
        for (DbTasks e : engines) {
            e.stop(Duration.ofSeconds(5));
        }
        engines.clear();
    }

    /** Builds (not starts) an engine with fast test timings, customised by {@code config}. */
    protected DbTasks engine(Consumer<DbTasks.Builder> config) {
        DbTasks.Builder b = DbTasks.builder(dataSource())
                .pollInterval(Duration.ofMillis(50))
                .rescueInterval(Duration.ofMillis(200))
                .lease(Duration.ofSeconds(5))
                .shutdownTimeout(Duration.ofSeconds(5));
        config.accept(b);
        DbTasks e = b.build();
        engines.add(e);
        return e;
    }

    /** Builds an engine that enqueues, queries and operates but never claims. */
    protected DbTasks producer() {
        return engine(b -> b.workers(false));
    }

    /** A latch of {@code count} that is opened after the test, whatever happened. */
    protected CountDownLatch latch(int count) {
        CountDownLatch l = new CountDownLatch(count);
        synchronized (latches) {
            latches.add(l);
        }
        return l;
    }

    /** A latch of 1 that is opened after the test. */
    protected CountDownLatch latch() {
        return latch(1);
    }

    /** Waits (at most {@link #PATIENCE}) for {@code latch}; fails the handler or test if it stays shut. */
    protected static void awaitLatch(CountDownLatch latch) throws InterruptedException {
        if (!latch.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("latch not opened within " + PATIENCE);
        }
    }

    /** Awaitility with the suite's patience and a short poll. */
    protected static ConditionFactory eventually() {
        return await().atMost(PATIENCE).pollInterval(Duration.ofMillis(20)).pollDelay(Duration.ZERO);
    }

    /** Waits until the task is in {@code status} and returns it. */
    protected static Task awaitStatus(DbTasks tasks, long id, TaskStatus status) {
        eventually()
                .alias("task " + id + " to become " + status)
                .until(() -> tasks.find(id).orElseThrow().status() == status);
        return tasks.find(id).orElseThrow();
    }

    /** Asserts that the task stays in {@code status} for {@code period} (for "must not run" checks). */
    protected static void assertStaysIn(DbTasks tasks, long id, TaskStatus status, Duration period) {
        await().during(period)
                .atMost(period.plusSeconds(5))
                .pollInterval(Duration.ofMillis(20))
                .alias("task " + id + " to stay " + status)
                .until(() -> tasks.find(id).orElseThrow().status() == status);
    }

    /** The dialect of the database under test. */
    protected Dialect dialect() {
        return dialect;
    }

    /** Runs one SQL update with the arguments bound in order; {@link Instant}s bound as timestamps. */
    protected int sql(String update, Object... args) {
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(update)) {
            bind(ps, args);
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(update, e);
        }
    }

    /** Runs a query whose first column of the first row is a number. */
    protected long count(String query, Object... args) {
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(query)) {
            bind(ps, args);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(query, e);
        }
    }

    /**
     * Makes the finished tasks that match {@code where} look finished at {@code at}: sets their
     * {@code finished_at} and moves them to the history day of {@code at} (on PostgreSQL first making
     * that day's partition, as the engine would have made it ahead).
     *
     * @return the tasks changed
     */
    protected int finishedAt(Instant at, String where, Object... args) {
        int day = io.dbtasks.internal.dialect.Dialect.historyDayOf(at);
        if (database() == TestDatabase.POSTGRESQL) {
            count("SELECT dbtasks_create_history_days(?, ?)", day, day);
        }
        Object[] all = new Object[args.length + 2];
        all[0] = at;
        all[1] = day;
        System.arraycopy(args, 0, all, 2, args.length);
        return sql(
                "UPDATE dbtasks_task SET finished_at = ?, history_day = ? WHERE status IN ('SUCCEEDED', 'FAILED',"
                        + " 'CANCELLED') AND (" + where + ")",
                all);
    }

    /** Makes a RUNNING task's lease end an hour ago, as if its worker had stopped heartbeating. */
    protected void expireLease(long taskId) {
        int n = sql(
                "UPDATE dbtasks_task SET lease_expires_at = ? WHERE id = ? AND status = 'RUNNING'",
                Instant.now().minus(Duration.ofHours(1)),
                taskId);
        if (n != 1) {
            throw new IllegalStateException("task " + taskId + " is not RUNNING; cannot expire its lease");
        }
    }

    /** Noon UTC {@code days} days before today: well inside that day whatever the time now. */
    protected static Instant noonDaysAgo(int days) {
        return Instant.now()
                .truncatedTo(ChronoUnit.DAYS)
                .minus(Duration.ofDays(days))
                .plus(Duration.ofHours(12));
    }

    /**
     * @param table {@code dbtasks_task} or {@code dbtasks_attempt}
     * @param day days since 1970-01-01 UTC
     * @return whether {@code table} has a partition of {@code day} (never, where history is one table)
     */
    protected boolean partitionExists(String table, int day) {
        String name = "p" + LocalDate.ofEpochDay(day).format(DateTimeFormatter.BASIC_ISO_DATE);
        return switch (dialect.name()) {
            case "mariadb" ->
                count(
                                "SELECT COUNT(*) FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE()"
                                        + " AND TABLE_NAME = ? AND PARTITION_NAME = ?",
                                table,
                                name)
                        == 1;
            case "postgresql" -> count("SELECT COUNT(*) FROM pg_class WHERE relname = ?", table + "_" + name) == 1;
            default -> false;
        };
    }

    /**
     * Asserts that {@link DbTasks#stateCounts()}, and {@link DbTasks#count(TaskQuery)} by queue and
     * finished state for each of {@code queues}, answer what a scan of the task table finds.
     */
    protected void assertCountsExact(DbTasks tasks, List<String> queues) {
        Map<String, Long> counted = new TreeMap<>();
        for (QueueStateCount s : tasks.stateCounts()) {
            counted.put(s.queue() + " " + s.status(), s.count());
        }
        Map<String, Long> scanned = new TreeMap<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps =
                        c.prepareStatement("SELECT queue, status, COUNT(*) FROM dbtasks_task GROUP BY queue, status");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                scanned.put(rs.getString(1) + " " + rs.getString(2), rs.getLong(3));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        assertThat(counted).isEqualTo(scanned);
        for (String queue : queues) {
            for (TaskStatus status : List.of(TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.CANCELLED)) {
                assertThat(tasks.count(
                                TaskQuery.builder().queue(queue).status(status).build()))
                        .as("count of %s %s", queue, status)
                        .isEqualTo(count(
                                "SELECT COUNT(*) FROM dbtasks_task WHERE queue = ? AND status = ?",
                                queue,
                                status.name()));
            }
        }
    }

    /**
     * Makes task {@code taskId} one that finished in {@code status} at {@code at}, as a settle at that
     * instant would have left it: status, {@code finished_at} and {@code history_day} (the day of
     * {@code at}, in days since 1970-01-01 UTC) together, the lease released; its attempts end at
     * {@code at} too and go to the same day. Where history is partitioned by day, that day's
     * partitions are created first, so the rows move into them.
     *
     * @param taskId the task
     * @param status a finished state
     * @param at the finish time
     * @return the history day the task is in now
     */
    protected int finishAt(long taskId, TaskStatus status, Instant at) {
        if (!status.isFinal()) {
            throw new IllegalArgumentException(status + " is not a finished state");
        }
        int day = historyDay(at);
        try (Connection c = dataSource().getConnection()) {
            if (dialect.partitionsHistory()) {
                dialect.createHistoryDays(c, day, day);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the partition of day " + day, e);
        }
        int n = sql(
                "UPDATE dbtasks_task SET status = ?,"
                        + " finished_at = ?, history_day = ?, lease_owner = NULL, lease_expires_at = NULL"
                        + " WHERE id = ?",
                status.name(),
                at,
                day,
                taskId);
        if (n != 1) {
            throw new IllegalStateException("no task " + taskId);
        }
        sql(
                "UPDATE dbtasks_attempt SET started_at = CASE WHEN started_at > ? THEN ? ELSE started_at END,"
                        + " finished_at = ?, history_day = ? WHERE task_id = ?",
                at,
                at,
                at,
                day,
                taskId);
        return day;
    }

    /** The history day of {@code at}: whole days since 1970-01-01 UTC. */
    protected static int historyDay(Instant at) {
        return io.dbtasks.internal.dialect.Dialect.historyDayOf(at);
    }

    /** The data source the test's engines and SQL helpers use: the database under test's pool. */
    protected DataSource dataSource() {
        return database().dataSource();
    }

    private void bind(PreparedStatement ps, Object... args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            if (args[i] instanceof Instant t) {
                dialect.setInstant(ps, i + 1, t);
            } else {
                ps.setObject(i + 1, args[i]);
            }
        }
    }
}
