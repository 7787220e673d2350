package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.quartz.CronExpression;
import org.quartz.CronScheduleBuilder;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.Scheduler;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.impl.SchedulerRepository;
import org.quartz.impl.StdSchedulerFactory;
import org.quartz.utils.ConnectionProvider;
import org.quartz.utils.DBConnectionManager;

/**
 * The recurring-schedule peer: Quartz with its JDBC job store ({@code JobStoreTX}, clustered), beside
 * {@link ScheduleScenario}, on the same database. {@code --schedules} jobs (default 10,000), each with
 * a cron trigger on {@code --schedule-cron} (Spring's six fields; the day-of-week {@code *} becomes
 * Quartz's {@code ?}), shared by {@code --schedule-engines} clustered schedulers (default 3) in this
 * JVM, each on a pool of its own. For each of {@code --schedule-rounds} slots after the schedulers
 * started, the figure is when, after the slot, the last of its firings began ({@link QuartzNoOp}
 * notes each), and every job must fire exactly once for it.
 *
 * <p>Settings, after Quartz's configuration reference for clustered, high-volume JDBC stores: {@code
 * isClustered=true}; {@code batchTriggerAcquisitionMaxCount} = the thread count (default 1: one
 * trigger per acquisition, the documented bottleneck for many triggers due at once) with {@code
 * acquireTriggersWithinLock=true}, which batches need; 10 threads per scheduler (its usual setting);
 * its delegate for the database ({@code PostgreSQLDelegate}, else {@code StdJDBCDelegate}); {@code
 * skipUpdateCheck}. Its tables come from the scripts in its jar ({@code tables_postgres.sql}, {@code
 * tables_mysql_innodb.sql}, {@code tables_h2.sql}), which drop and create them, run before every
 * measurement.
 *
 * <p>If Quartz cannot run on this database, or a slot does not complete within 120 s, the scenario
 * logs why and returns the figures it has, so the rest of the run goes on.
 */
final class QuartzScheduleScenario implements Scenario {
    /** The scenario's name. */
    static final String NAME = "quartz";

    private static final String SCHEDULER = "BenchQuartz";
    private static final int THREADS = 10;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<Result> run(BenchRun run) {
        List<Result> results = new ArrayList<>();
        try {
            measure(run, results);
        } catch (Exception | LinkageError e) {
            Log.line("quartz: Quartz failed on " + run.db().id() + ": " + e);
            for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
                Log.line("quartz:   caused by " + cause);
            }
        }
        return results;
    }

    /** Measures the slots, adding each figure to {@code results} as it is taken. */
    private void measure(BenchRun run, List<Result> results) throws Exception {
        BenchConfig c = run.config();
        int n = c.schedules();
        String cron = quartzCron(c.scheduleCron());
        createTables(run);
        QuartzNoOp.reset();
        List<HikariDataSource> pools = new ArrayList<>();
        List<Scheduler> schedulers = new ArrayList<>();
        try {
            for (int i = 0; i < c.scheduleEngines(); i++) {
                HikariDataSource ds = run.pool("bench-quartz-" + i, THREADS + 2);
                pools.add(ds);
                schedulers.add(scheduler(run.db(), i, ds));
            }
            long createStart = System.nanoTime();
            create(schedulers.get(0), n, cron);
            Log.line(String.format(
                    Locale.ROOT,
                    "quartz: %d jobs with cron triggers '%s' created in %.1f s",
                    n,
                    cron,
                    (System.nanoTime() - createStart) / 1e9));
            for (Scheduler s : schedulers) {
                s.start();
            }
            CronExpression expression = new CronExpression(cron);
            // The first slot measured is one the schedulers were running for (2 s of margin).
            Date slot = expression.getNextValidTimeAfter(new Date(System.currentTimeMillis() + 2_000));
            for (int round = 0; round < c.scheduleRounds(); round++) {
                long slotMillis = slot.getTime();
                long deadline = slotMillis + 120_000;
                while (QuartzNoOp.fired(slotMillis) < n) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("Quartz fired " + QuartzNoOp.fired(slotMillis) + " of " + n
                                + " jobs for the slot " + slot.toInstant() + " in 120 s");
                    }
                    Thread.sleep(5);
                }
                long lastMillis = QuartzNoOp.lastMillis(slotMillis) - slotMillis;
                Thread.sleep(200); // a duplicate firing would show by now
                if (QuartzNoOp.fired(slotMillis) != n) {
                    throw new IllegalStateException(
                            "Quartz fired " + QuartzNoOp.fired(slotMillis) + " jobs for " + n + " triggers");
                }
                Result r = Result.plain(
                        name(),
                        run.db(),
                        String.format(
                                Locale.ROOT,
                                "%d cron triggers, %d schedulers clustered, %d threads, slot %d (last fired at %+d ms)",
                                n,
                                c.scheduleEngines(),
                                THREADS,
                                round + 1,
                                lastMillis),
                        n,
                        Math.max(lastMillis, 1) / 1000.0,
                        null);
                Log.result(r);
                results.add(r);
                slot = expression.getNextValidTimeAfter(slot);
            }
        } finally {
            for (Scheduler s : schedulers) {
                s.shutdown(true);
            }
            pools.forEach(HikariDataSource::close);
        }
    }

    /** @return a standby scheduler of the cluster, on {@code ds} */
    private static Scheduler scheduler(Database db, int index, HikariDataSource ds) throws Exception {
        String dataSource = "bench-quartz-" + index;
        DBConnectionManager.getInstance().addConnectionProvider(dataSource, new ConnectionProvider() {
            @Override
            public Connection getConnection() throws SQLException {
                return ds.getConnection();
            }

            @Override
            public void shutdown() {
                // the scenario closes its pools
            }

            @Override
            public void initialize() {
                // the pool is open already
            }
        });
        Properties p = new Properties();
        p.setProperty("org.quartz.scheduler.instanceName", SCHEDULER);
        p.setProperty("org.quartz.scheduler.instanceId", "bench-quartz-" + index);
        p.setProperty("org.quartz.scheduler.skipUpdateCheck", "true");
        p.setProperty("org.quartz.scheduler.batchTriggerAcquisitionMaxCount", String.valueOf(THREADS));
        p.setProperty("org.quartz.threadPool.threadCount", String.valueOf(THREADS));
        p.setProperty("org.quartz.jobStore.class", "org.quartz.impl.jdbcjobstore.JobStoreTX");
        p.setProperty(
                "org.quartz.jobStore.driverDelegateClass",
                db == Database.POSTGRESQL
                        ? "org.quartz.impl.jdbcjobstore.PostgreSQLDelegate"
                        : "org.quartz.impl.jdbcjobstore.StdJDBCDelegate");
        p.setProperty("org.quartz.jobStore.dataSource", dataSource);
        p.setProperty("org.quartz.jobStore.isClustered", "true");
        p.setProperty("org.quartz.jobStore.acquireTriggersWithinLock", "true");
        Scheduler scheduler = new StdSchedulerFactory(p).getScheduler();
        // The cluster's schedulers share a name; in one JVM Quartz's registry would hand back the first.
        SchedulerRepository.getInstance().remove(SCHEDULER);
        return scheduler;
    }

    private static void create(Scheduler scheduler, int n, String cron) throws Exception {
        Map<JobDetail, Set<? extends Trigger>> chunk = new HashMap<>();
        for (int i = 0; i < n; i++) {
            JobDetail job = JobBuilder.newJob(QuartzNoOp.class)
                    .withIdentity("bench-" + i, "bench")
                    .build();
            Trigger trigger = TriggerBuilder.newTrigger()
                    .withIdentity("bench-" + i, "bench")
                    .forJob(job)
                    .withSchedule(CronScheduleBuilder.cronSchedule(cron))
                    .build();
            chunk.put(job, Set.of(trigger));
            if (chunk.size() == 1000 || i == n - 1) {
                scheduler.scheduleJobs(chunk, false);
                chunk = new HashMap<>();
            }
        }
    }

    /** Spring's six-field cron to Quartz's: Quartz wants {@code ?} in day-of-month or day-of-week. */
    static String quartzCron(String spring) {
        String[] f = spring.trim().split("\\s+");
        if (f.length != 6) {
            throw new IllegalArgumentException("expected six cron fields, seconds first: " + spring);
        }
        if (f[5].equals("*")) {
            f[5] = "?";
        } else if (f[3].equals("*")) {
            f[3] = "?";
        }
        return String.join(" ", f);
    }

    /** Drops and creates Quartz's tables with the script in its jar for this database. */
    private static void createTables(BenchRun run) throws IOException, SQLException {
        String script = switch (run.db()) {
            case POSTGRESQL -> "tables_postgres.sql";
            case MARIADB -> "tables_mysql_innodb.sql";
            case H2 -> "tables_h2.sql";
        };
        String sql;
        try (InputStream in = Scheduler.class.getResourceAsStream("/org/quartz/impl/jdbcjobstore/" + script)) {
            if (in == null) {
                throw new IllegalStateException("Quartz's " + script + " is not on the class path");
            }
            sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        StringBuilder body = new StringBuilder();
        for (String line : sql.split("\n")) {
            String t = line.trim();
            if (!t.startsWith("--") && !t.startsWith("#")) {
                body.append(line).append('\n');
            }
        }
        try (Connection c = run.admin().getConnection();
                Statement s = c.createStatement()) {
            for (String statement : body.toString().split(";")) {
                String t = statement.trim();
                if (!t.isEmpty() && !t.equalsIgnoreCase("commit")) {
                    s.execute(t);
                }
            }
        }
    }
}
