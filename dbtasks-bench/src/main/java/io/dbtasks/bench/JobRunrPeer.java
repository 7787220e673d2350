package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.jobrunr.jobs.mappers.JobMapper;
import org.jobrunr.scheduling.JobScheduler;
import org.jobrunr.server.BackgroundJobServer;
import org.jobrunr.server.BackgroundJobServerConfiguration;
import org.jobrunr.storage.StorageProvider;
import org.jobrunr.storage.sql.common.SqlStorageProviderFactory;
import org.jobrunr.utils.mapper.JsonMapper;
import org.jobrunr.utils.mapper.gson.GsonJsonMapper;

/**
 * The second peer: JobRunr (github.com/jobrunr/jobrunr, open-source edition) burning down the same
 * kind of no-op jobs on the same database, once per worker count of the run. For each W its tables
 * are emptied, N jobs ({@link JobRunrNoOp#run}) are enqueued in bulk with {@link JobScheduler}'s
 * {@code enqueue(Stream, ...)} before any server runs, then a {@link BackgroundJobServer} with W
 * workers starts on JobRunr's SQL storage provider over a HikariCP pool of W + 8 connections (its
 * workers and its zookeeping threads each hold one while they write); the
 * clock runs from {@code start()} until every job has run and none is left outside SUCCEEDED in
 * {@code jobrunr_jobs}.
 *
 * <p>Settings, from JobRunr's API and documentation, chosen for throughput:
 *
 * <ul>
 *   <li>{@code andWorkerCount(W)}: the same worker count as the engine (JobRunr's default is 8 per
 *       CPU); on Java 17 its workers are platform threads.
 *   <li>{@code andPollInterval(5 s)} ({@link #POLL_INTERVAL}): the smallest JobRunr accepts on a
 *       SQL storage (its {@code AbstractStorageProvider} refuses less: "The smallest supported
 *       pollInterval is 5 seconds - otherwise it will cause to much load on your SQL/noSQL
 *       datastore"); its default is 15 s. Between polls a worker that finishes a job fetches new
 *       work when fewer than 70 % of the workers are busy, as many jobs as there are free workers;
 *       when that chain stops, the next poll restarts it.
 *   <li>No dashboard (it is a separate web server, not started), storage tables created by {@code
 *       SqlStorageProviderFactory} before the clock starts ({@code DatabaseOptions.CREATE}, its
 *       default), default retry filter and concurrent-modification policy. Jobs are mapped with its
 *       {@link GsonJsonMapper} (it supports Jackson 2, Gson or JSON-B, not Jackson 3).
 * </ul>
 *
 * <p>The JVM's first JobRunr burn-down is a warm-up, not reported, as for the engine and
 * db-scheduler.
 *
 * <p>If JobRunr cannot run on this database (its table creation or anything else fails), the
 * scenario logs why and returns the figures it has, so the rest of the run goes on.
 */
final class JobRunrPeer implements Scenario {
    /** The scenario's name. */
    static final String NAME = "jobrunr";
    /** The series of its figures, and the key of "x JobRunr". */
    static final String SERIES = "JobRunr";
    /** JobRunr's poll interval unless {@code --jobrunr-poll-ms} says otherwise; see the class comment. */
    static final Duration POLL_INTERVAL = Duration.ofSeconds(5);

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<Result> run(BenchRun run) {
        List<Result> results = new ArrayList<>();
        for (int workers : run.config().baselineWorkers()) {
            try {
                if (run.needsWarmUp("JobRunr")) {
                    // Unmeasured, like the engine's (Burner#warmUpOnce): compiles JobRunr's code first.
                    Result warm = measure(run, workers);
                    Log.warmUp("JobRunr", warm.config(), warm.tasks(), warm.seconds());
                }
                Result r = measure(run, workers);
                Log.result(r);
                results.add(r);
            } catch (Exception | LinkageError e) {
                Log.line("jobrunr: JobRunr failed on " + run.db().id() + " at W=" + workers + ": " + e);
                Throwable cause = e.getCause();
                while (cause != null) {
                    Log.line("jobrunr:   caused by " + cause);
                    cause = cause.getCause();
                }
                Log.line("jobrunr: no JobRunr figures beyond this point on "
                        + run.db().id());
                break;
            }
        }
        return results;
    }

    private Result measure(BenchRun run, int workers) throws Exception {
        int tasks = run.config().jobRunrTasks();
        JsonMapper json = new GsonJsonMapper();
        try (HikariDataSource ds = run.pool("bench-jobrunr", workers + 8)) {
            StorageProvider storage = SqlStorageProviderFactory.using(ds); // creates its tables if missing
            try {
                storage.setJobMapper(new JobMapper(json));
                clear(ds);
                JobRunrNoOp.reset();
                new JobScheduler(storage).enqueue(IntStream.range(0, tasks).boxed(), i -> JobRunrNoOp.run(i));
                long enqueued = notSucceeded(ds);
                if (enqueued != tasks) {
                    throw new IllegalStateException("enqueued " + enqueued + " of " + tasks + " jobs");
                }
                BackgroundJobServer server = new BackgroundJobServer(
                        storage,
                        json,
                        null, // static no-op method: no job activator needed
                        BackgroundJobServerConfiguration.usingStandardBackgroundJobServerConfiguration()
                                .andName("bench-jobrunr")
                                .andWorkerCount(workers)
                                .andPollInterval(run.config().jobRunrPoll()));
                long deadline = System.nanoTime() + Burner.timeoutMillis(tasks) * 1_000_000;
                long start = System.nanoTime();
                server.start();
                double seconds;
                try {
                    while (JobRunrNoOp.executed() < tasks || notSucceeded(ds) > 0) {
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("JobRunr ran " + JobRunrNoOp.executed() + " of " + tasks
                                    + " jobs before the timeout");
                        }
                        Thread.sleep(JobRunrNoOp.executed() < tasks ? 2 : 5);
                    }
                    seconds = (System.nanoTime() - start) / 1e9; // the server's stop is not part of the burn-down
                } finally {
                    server.stop();
                }
                return Result.throughput(
                        name(),
                        run.db(),
                        "W=" + workers + " poll=" + run.config().jobRunrPoll().toMillis() + "ms",
                        SERIES,
                        workers,
                        tasks,
                        seconds);
            } finally {
                storage.close();
            }
        }
    }

    /** Empties JobRunr's job and server tables, so each run starts from its own jobs only. */
    private static void clear(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            s.executeUpdate("DELETE FROM jobrunr_jobs");
            s.executeUpdate("DELETE FROM jobrunr_recurring_jobs");
            s.executeUpdate("DELETE FROM jobrunr_backgroundjobservers");
        }
    }

    /** @return jobs not yet SUCCEEDED */
    private static long notSucceeded(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM jobrunr_jobs WHERE state <> 'SUCCEEDED'")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
