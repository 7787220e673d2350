package io.dbtasks.bench;

import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntConsumer;

/**
 * Enqueue: after an untimed warm-up on each side, N tasks stored through the public API on a
 * producer-only engine, one {@code enqueue}
 * (one transaction) per task from one client thread, then {@code enqueueAll} in batches of 100 and
 * of 1000 (one transaction per batch); then single enqueue from {@link Workload#enqueueThreads()}
 * threads at once. Beside them, in the same run, db-scheduler's single {@code
 * SchedulerClient.schedule(instance, time)} from one thread and from as many threads, on its own
 * table; each single-enqueue row of dbtasks gives its ratio to db-scheduler's with the same number
 * of threads.
 */
final class EnqueueScenario implements Scenario {
    static final List<Integer> BATCHES = List.of(1, 100, 1000);

    @Override
    public String name() {
        return "enqueue";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        int tasks = run.config().enqueueTasks();
        int threads = run.config().workload().enqueueThreads();
        TaskRequest request =
                TaskRequest.builder(TaskTable.KIND).queue(TaskTable.QUEUE).build();
        List<Result> results = new ArrayList<>();
        double single;
        double concurrent;
        try (HikariDataSource ds = run.pool("bench-enqueue", threads + 2)) {
            DbTasks producer = DbTasks.builder(ds).migrate(false).workers(false).build();
            // Untimed warm-up, as db-scheduler's client gets below: the first single enqueues of a cold
            // JVM ran at 0.67 of the warm rate (2,502 against 3,727/s in one JVM, 3,000 each).
            for (int i = 0; i < warmup(tasks); i++) {
                producer.enqueue(request);
            }
            single = 0;
            for (int batch : BATCHES) {
                run.tasks().reset();
                List<TaskRequest> requests = Collections.nCopies(batch, request);
                int rounds = Math.max(1, tasks / batch);
                long start = System.nanoTime();
                for (int i = 0; i < rounds; i++) {
                    if (batch == 1) {
                        producer.enqueue(request);
                    } else {
                        producer.enqueueAll(requests);
                    }
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                long stored = run.tasks().open();
                if (stored != (long) rounds * batch) {
                    throw new IllegalStateException("enqueued " + rounds * batch + " tasks but " + stored + " stored");
                }
                Result r =
                        Result.plain(name(), run.db(), batch == 1 ? "single" : "batch=" + batch, stored, seconds, null);
                Log.result(r);
                if (batch == 1) {
                    single = r.tasksPerSecond();
                    results.add(null); // replaced below, once db-scheduler's figure is known
                } else {
                    results.add(r);
                }
            }
            run.tasks().reset();
            double seconds = timeThreads(threads, tasks, i -> producer.enqueue(request));
            long stored = run.tasks().open();
            if (stored != tasks) {
                throw new IllegalStateException(
                        "enqueued " + tasks + " tasks from " + threads + " threads but " + stored + " stored");
            }
            concurrent = tasks / seconds;
            producer.close();
        }
        run.tasks().reset();
        double[] peer = dbScheduler(run, tasks, threads);
        results.set(BATCHES.indexOf(1), row(run, "single", tasks, tasks / single, peer[0]));
        results.add(row(run, "single, " + threads + " threads", tasks, tasks / concurrent, peer[1]));
        for (int t = 0; t < 2; t++) {
            Result r = Result.plain(
                    name(),
                    run.db(),
                    "db-scheduler schedule, " + (t == 0 ? 1 : threads) + " thread" + (t == 0 ? "" : "s"),
                    tasks,
                    tasks / peer[t],
                    null);
            Log.result(r);
            results.add(r);
        }
        return results;
    }

    /** @return how many untimed single enqueues (or schedules) warm the JVM up before the clock */
    private static int warmup(int tasks) {
        return Math.min(2000, Math.max(10, tasks / 5));
    }

    private Result row(BenchRun run, String label, int tasks, double seconds, double peerRate) {
        String config = String.format(Locale.ROOT, "%s: x db-scheduler %.2f", label, tasks / seconds / peerRate);
        Result r = Result.plain(name(), run.db(), config, tasks, seconds, null);
        Log.line(String.format(Locale.ROOT, "enqueue %s %s", run.db().id(), config));
        return r;
    }

    /**
     * @return db-scheduler's single-schedule rates (tasks/s) from one thread and from {@code
     *     threads} threads
     */
    private static double[] dbScheduler(BenchRun run, int tasks, int threads) throws Exception {
        DbSchedulerPeer.createTable(run.admin(), run.db());
        OneTimeTask<Void> task = Tasks.oneTime("bench-enqueue").execute((instance, context) -> {});
        double[] rates = new double[2];
        try (HikariDataSource ds = run.pool("bench-db-scheduler-client", threads + 2)) {
            SchedulerClient client = SchedulerClient.Builder.create(ds, task).build();
            for (int i = 0; i < warmup(tasks); i++) {
                client.schedule(task.instance("warmup-" + i), Instant.now());
            }
            for (int t = 0; t < 2; t++) {
                int n = t == 0 ? 1 : threads;
                String prefix = "e" + t + "-";
                deleteScheduled(ds);
                double seconds = timeThreads(n, tasks, i -> client.schedule(task.instance(prefix + i), Instant.now()));
                long stored = countScheduled(ds);
                if (stored != tasks) {
                    throw new IllegalStateException(
                            "db-scheduler scheduled " + tasks + " tasks but " + stored + " are stored");
                }
                rates[t] = tasks / seconds;
            }
            deleteScheduled(ds);
        }
        return rates;
    }

    /**
     * Runs {@code call} for 0 to {@code tasks - 1} on {@code threads} threads, each taking an equal
     * share, and times it from the first call to the last return.
     *
     * @return seconds
     */
    static double timeThreads(int threads, int tasks, IntConsumer call) throws Exception {
        if (threads == 1) {
            long start = System.nanoTime();
            for (int i = 0; i < tasks; i++) {
                call.accept(i);
            }
            return (System.nanoTime() - start) / 1e9;
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            long start = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                int from = (int) ((long) tasks * t / threads);
                int to = (int) ((long) tasks * (t + 1) / threads);
                futures.add(pool.submit(() -> {
                    for (int i = from; i < to; i++) {
                        call.accept(i);
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
            return (System.nanoTime() - start) / 1e9;
        } finally {
            pool.shutdownNow();
        }
    }

    private static void deleteScheduled(HikariDataSource ds) throws Exception {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            s.execute("DELETE FROM scheduled_tasks");
        }
    }

    private static long countScheduled(HikariDataSource ds) throws Exception {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM scheduled_tasks")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
