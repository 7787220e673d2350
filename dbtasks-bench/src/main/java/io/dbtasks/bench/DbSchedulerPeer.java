package io.dbtasks.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerBuilder;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * The peer: db-scheduler (github.com/kagkarlsson/db-scheduler) burning down the same number of
 * no-op one-time tasks on the same database, with as many executor threads as the engine has
 * workers and the same polling interval. Twice per worker count: with its default polling
 * (fetch, then lock each execution with an optimistic UPDATE) and with lock-and-fetch ({@code
 * SELECT ... FOR UPDATE SKIP LOCKED}) where db-scheduler offers it: on PostgreSQL, not on MariaDB or
 * H2). The tasks are scheduled with its
 * own {@code scheduleBatch} before the scheduler starts; the clock runs from {@code start()} until
 * every task has run and {@code scheduled_tasks} is empty (one-time tasks are deleted when done).
 *
 * <p>Its {@code scheduled_tasks} table is created if missing, after db-scheduler's published schemas
 * ({@code postgresql_tables.sql}, {@code mariadb_tables.sql}, {@code hsql_tables.sql} in its test
 * resources).
 *
 * <p>The JVM's first db-scheduler burn-down is a warm-up, not reported: the engine's figures are
 * taken warm too ({@link Burner#warmUpOnce}).
 */
final class DbSchedulerPeer implements Scenario {
    /** The lock-and-fetch limits, as fractions of the thread count, db-scheduler's README suggests. */
    static final double LOWER_LIMIT = 0.5;

    static final double UPPER_LIMIT = 1.0;
    static final String POLLING = "db-scheduler polling";
    static final String LOCK_AND_FETCH = "db-scheduler lock-and-fetch";

    @Override
    public String name() {
        return "peer";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        createTable(run.admin(), run.db());
        List<Result> results = new ArrayList<>();
        boolean lockAndFetch = true;
        for (int workers : c.baselineWorkers()) {
            if (run.needsWarmUp("db-scheduler")) {
                measure(run, workers, false, true); // unmeasured, like the engine's (Burner#warmUpOnce)
            }
            results.add(measure(run, workers, false, false).orElseThrow());
            if (lockAndFetch) {
                Optional<Result> r = measure(run, workers, true, false);
                r.ifPresent(results::add);
                lockAndFetch = r.isPresent();
            }
        }
        return results;
    }

    /**
     * @param warmUp {@code true}: the JVM's first db-scheduler burn-down, which compiles its code
     *     before any figure is taken; logged as a warm-up, not reported
     * @return the figure, or empty if db-scheduler does not offer lock-and-fetch on this database
     */
    private Optional<Result> measure(BenchRun run, int workers, boolean lockAndFetch, boolean warmUp) throws Exception {
        int tasks = run.config().peerTasks();
        AtomicLong executed = new AtomicLong();
        OneTimeTask<Void> task = Tasks.oneTime("bench-noop").execute((instance, context) -> executed.incrementAndGet());
        try (HikariDataSource ds = run.pool("bench-db-scheduler", workers + 4)) {
            execute(ds, "DELETE FROM scheduled_tasks");
            SchedulerBuilder builder = Scheduler.create(ds, task)
                    .threads(workers)
                    .pollingInterval(run.config().pollInterval())
                    .shutdownMaxWait(java.time.Duration.ofSeconds(10))
                    .alwaysPersistTimestampInUTC(); // what db-scheduler asks for on MariaDB/MySQL
            if (lockAndFetch) {
                builder.pollUsingLockAndFetch(LOWER_LIMIT, UPPER_LIMIT);
            }
            Scheduler scheduler;
            try {
                scheduler = builder.build();
            } catch (IllegalArgumentException e) {
                // 16.x offers lock-and-fetch only where its JdbcCustomization says SKIP LOCKED works
                // (PostgreSQL, MySQL 8, MSSQL, Oracle); its MariaDB and generic ones say it does not.
                Log.line("peer: db-scheduler on " + run.db().id() + ": " + e.getMessage());
                return Optional.empty();
            }
            schedule(scheduler, task, tasks);
            long deadline = System.nanoTime() + Burner.timeoutMillis(tasks) * 1_000_000;
            long start = System.nanoTime();
            scheduler.start();
            double seconds;
            try {
                while (executed.get() < tasks || remaining(ds) > 0) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(
                                "db-scheduler ran " + executed.get() + " of " + tasks + " tasks before the timeout");
                    }
                    Thread.sleep(executed.get() < tasks ? 2 : 5);
                }
                seconds = (System.nanoTime() - start) / 1e9; // the scheduler's stop is not part of the burn-down
            } finally {
                scheduler.stop();
            }
            String mode = lockAndFetch ? "lock-and-fetch(" + LOWER_LIMIT + "," + UPPER_LIMIT + ")" : "polling";
            Result r = Result.throughput(
                    name(),
                    run.db(),
                    "W=" + workers + " " + mode,
                    lockAndFetch ? LOCK_AND_FETCH : POLLING,
                    workers,
                    tasks,
                    seconds);
            if (warmUp) {
                Log.warmUp("db-scheduler", r.config(), tasks, seconds);
            } else {
                Log.result(r);
            }
            return Optional.of(r);
        }
    }

    private static void schedule(Scheduler scheduler, OneTimeTask<Void> task, int tasks) {
        Instant due = Instant.now().minusSeconds(1);
        List<TaskInstance<?>> chunk = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            chunk.add(task.instance("t" + i));
            if (chunk.size() == 1000 || i == tasks - 1) {
                scheduler.scheduleBatch(chunk, due);
                chunk = new ArrayList<>();
            }
        }
    }

    private static long remaining(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM scheduled_tasks")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static void createTable(DataSource ds, Database db) throws SQLException {
        switch (db) {
            case POSTGRESQL ->
                execute(
                        ds,
                        "CREATE TABLE IF NOT EXISTS scheduled_tasks (task_name TEXT NOT NULL, task_instance TEXT NOT NULL,"
                                + " task_data BYTEA, execution_time TIMESTAMP WITH TIME ZONE NOT NULL,"
                                + " picked BOOLEAN NOT NULL, picked_by TEXT, last_success TIMESTAMP WITH TIME ZONE,"
                                + " last_failure TIMESTAMP WITH TIME ZONE, consecutive_failures INT,"
                                + " last_heartbeat TIMESTAMP WITH TIME ZONE, version BIGINT NOT NULL, priority SMALLINT,"
                                + " PRIMARY KEY (task_name, task_instance))",
                        "CREATE INDEX IF NOT EXISTS execution_time_idx ON scheduled_tasks (execution_time)",
                        "CREATE INDEX IF NOT EXISTS last_heartbeat_idx ON scheduled_tasks (last_heartbeat)",
                        "CREATE INDEX IF NOT EXISTS priority_execution_time_idx"
                                + " ON scheduled_tasks (priority DESC, execution_time ASC)");
            case MARIADB ->
                execute(
                        ds,
                        "CREATE TABLE IF NOT EXISTS scheduled_tasks (task_name VARCHAR(100) NOT NULL,"
                                + " task_instance VARCHAR(100) NOT NULL, task_data BLOB,"
                                + " execution_time TIMESTAMP(6) NOT NULL, picked BOOLEAN NOT NULL, picked_by VARCHAR(50),"
                                + " last_success TIMESTAMP(6) NULL, last_failure TIMESTAMP(6) NULL,"
                                + " consecutive_failures INT, last_heartbeat TIMESTAMP(6) NULL, version BIGINT NOT NULL,"
                                + " priority SMALLINT, PRIMARY KEY (task_name, task_instance),"
                                + " INDEX execution_time_idx (execution_time), INDEX last_heartbeat_idx (last_heartbeat),"
                                + " INDEX priority_execution_time_idx (priority DESC, execution_time ASC))");
            case H2 ->
                execute(
                        ds,
                        "CREATE TABLE IF NOT EXISTS scheduled_tasks (task_name VARCHAR(100) NOT NULL,"
                                + " task_instance VARCHAR(100) NOT NULL, task_data BLOB,"
                                + " execution_time TIMESTAMP WITH TIME ZONE, picked BOOLEAN, picked_by VARCHAR(50),"
                                + " last_success TIMESTAMP WITH TIME ZONE, last_failure TIMESTAMP WITH TIME ZONE,"
                                + " consecutive_failures INT, last_heartbeat TIMESTAMP WITH TIME ZONE, version BIGINT,"
                                + " priority SMALLINT, PRIMARY KEY (task_name, task_instance))",
                        "CREATE INDEX IF NOT EXISTS execution_time_idx ON scheduled_tasks (execution_time)");
        }
    }

    private static void execute(DataSource ds, String... statements) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        }
    }
}
