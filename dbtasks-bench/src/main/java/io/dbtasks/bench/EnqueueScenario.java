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
 * producer-only engine, one {@code enqueue} (one transaction) per task from one client thread, then
 * {@code enqueueAll} in batches of 100 and of 1000 (one transaction per batch); then single enqueue
 * from {@link Workload#enqueueThreads()} threads at once. Beside them, in the same run, db-scheduler's
 * single {@code SchedulerClient.schedule(instance, time)} from one thread and from as many threads,
 * on its own table; each single-enqueue row of dbtasks gives its ratio to db-scheduler's with the
 * same number of threads. The single enqueues of the two alternate in {@value #ROUNDS} rounds per
 * side, each side first in half of them, so neither is always measured first, on a fresher
 * database; both tables are emptied with {@code TRUNCATE}, which leaves neither dead rows.
 */
final class EnqueueScenario implements Scenario {
    static final List<Integer> BATCHES = List.of(1, 100, 1000);

    @Override
    public String name() {
        return "enqueue";
    }

    /**
     * Single enqueues alternate between dbtasks and db-scheduler in this many rounds per side; even,
     * so each side goes first equally often.
     */
    static final int ROUNDS = 6;

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        int tasks = run.config().enqueueTasks();
        int threads = run.config().workload().enqueueThreads();
        TaskRequest request =
                TaskRequest.builder(TaskTable.KIND).queue(TaskTable.QUEUE).build();
        List<Result> results = new ArrayList<>();
        DbSchedulerPeer.createTable(run.admin(), run.db());
        OneTimeTask<Void> task = Tasks.oneTime("bench-enqueue").execute((instance, context) -> {});
        try (HikariDataSource ds = run.pool("bench-enqueue", threads + 2);
                HikariDataSource peerDs = run.pool("bench-db-scheduler-client", threads + 2)) {
            DbTasks producer = DbTasks.builder(ds).migrate(false).workers(false).build();
            SchedulerClient client =
                    SchedulerClient.Builder.create(peerDs, task).build();
            // Untimed warm-up of each side: the first single enqueues of a cold JVM ran at 0.67 of the
            // warm rate (2,502 against 3,727/s in one JVM, 3,000 each).
            for (int i = 0; i < warmup(tasks); i++) {
                producer.enqueue(request);
                client.schedule(task.instance("warmup-" + i), Instant.now());
            }
            run.tasks().reset();
            deleteScheduled(peerDs);
            double[] single = alternate(
                    run,
                    tasks,
                    1,
                    i -> producer.enqueue(request),
                    i -> client.schedule(task.instance("s-" + i), Instant.now()),
                    peerDs);
            for (int batch : BATCHES.subList(1, BATCHES.size())) {
                run.tasks().reset();
                List<TaskRequest> requests = Collections.nCopies(batch, request);
                int rounds = Math.max(1, tasks / batch);
                long start = System.nanoTime();
                for (int i = 0; i < rounds; i++) {
                    producer.enqueueAll(requests);
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                long stored = run.tasks().open();
                if (stored != (long) rounds * batch) {
                    throw new IllegalStateException("enqueued " + rounds * batch + " tasks but " + stored + " stored");
                }
                Result r = Result.plain(name(), run.db(), "batch=" + batch, stored, seconds, null);
                Log.result(r);
                results.add(r);
            }
            run.tasks().reset();
            deleteScheduled(peerDs);
            double[] concurrent = alternate(
                    run,
                    tasks,
                    threads,
                    i -> producer.enqueue(request),
                    i -> client.schedule(task.instance("t-" + i), Instant.now()),
                    peerDs);
            producer.close();
            deleteScheduled(peerDs);
            run.tasks().reset();
            results.add(0, row(run, "single", tasks, single[0], tasks / single[1]));
            results.add(row(run, "single, " + threads + " threads", tasks, concurrent[0], tasks / concurrent[1]));
            for (int t = 0; t < 2; t++) {
                double seconds = t == 0 ? single[1] : concurrent[1];
                Result r = Result.plain(
                        name(),
                        run.db(),
                        "db-scheduler schedule, " + (t == 0 ? 1 : threads) + " thread" + (t == 0 ? "" : "s"),
                        tasks,
                        seconds,
                        null);
                Log.result(r);
                results.add(r);
            }
        }
        return results;
    }

    /**
     * Enqueues {@code tasks} on each side from {@code threads} threads, in {@value #ROUNDS} rounds
     * per side: dbtasks then db-scheduler, then db-scheduler then dbtasks, and so on, so a drift of the machine or the database over the run (a checkpoint, autovacuum, the
     * WAL of the rounds before) falls on both alike; then checks that every task is stored.
     *
     * @return the seconds dbtasks took in all, then the seconds db-scheduler took
     */
    private static double[] alternate(
            BenchRun run, int tasks, int threads, IntConsumer ours, IntConsumer theirs, HikariDataSource peerDs)
            throws Exception {
        double[] seconds = new double[2];
        for (int round = 0; round < ROUNDS; round++) {
            int from = (int) ((long) tasks * round / ROUNDS);
            int to = (int) ((long) tasks * (round + 1) / ROUNDS);
            for (int k = 0; k < 2; k++) {
                int side = (round + k) % 2;
                IntConsumer call = side == 0 ? ours : theirs;
                seconds[side] += timeThreads(threads, to - from, i -> call.accept(from + i));
            }
        }
        long stored = run.tasks().open();
        long scheduled = countScheduled(peerDs);
        if (stored != tasks || scheduled != tasks) {
            throw new IllegalStateException("enqueued " + tasks + " tasks on each side from " + threads
                    + " thread(s), but dbtasks stored " + stored + " and db-scheduler " + scheduled);
        }
        return seconds;
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
            s.execute("TRUNCATE TABLE scheduled_tasks");
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
