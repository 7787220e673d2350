package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Failures and retries: N tasks whose first attempt throws and whose retry, after a tiny fixed
 * backoff ({@link Workload#failOnceBackoffMillis()}, {@code RetryPolicy.fixed}), succeeds; burned
 * down beside a success-only burn-down of N no-op tasks at the same W, measured just before it. A
 * task counts as done only when it is SUCCEEDED on its second attempt; the run fails otherwise. The
 * row gives the rate in tasks (not attempts) per second and its ratio to the success-only rate.
 */
final class FailOnceScenario implements Scenario {
    private static final String KIND = "bench.failonce";

    @Override
    public String name() {
        return "failonce";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        Burner burner = new Burner(run);
        List<Result> results = new ArrayList<>();
        int tasks = c.burndownTasks();
        for (int workers : c.workers()) {
            burner.warmUpOnce(workers, tasks);
            run.tasks().reset();
            run.tasks().insertPending(tasks);
            double successOnly = tasks / burner.burnInProcess(workers, tasks, new AtomicLong());
            run.tasks().reset();
            WorkloadTasks.insert(
                    run,
                    TaskTable.QUEUE,
                    KIND,
                    tasks,
                    WorkloadTasks.fixedBackoff(c.workload().failOnceBackoffMillis()));
            double seconds = burn(run, workers, tasks);
            long done = run.tasks().count("queue = '" + TaskTable.QUEUE + "' AND status = 'SUCCEEDED' AND attempt = 2");
            if (done != tasks) {
                throw new IllegalStateException("failonce: " + done + " of " + tasks
                        + " tasks SUCCEEDED on their second attempt; "
                        + run.tasks().count("status <> 'SUCCEEDED' OR attempt <> 2") + " did not");
            }
            double rate = tasks / seconds;
            Result r = Result.plain(
                    name(),
                    run.db(),
                    String.format(
                            Locale.ROOT,
                            "W=%d fail once, retry after %d ms: x success-only %.2f (success-only %.0f/s)",
                            workers,
                            c.workload().failOnceBackoffMillis(),
                            rate / successOnly,
                            successOnly),
                    tasks,
                    seconds,
                    null);
            Log.result(r);
            results.add(r);
        }
        return results;
    }

    /** @return seconds until every task has run twice and the queue is drained */
    private static double burn(BenchRun run, int workers, long tasks) throws Exception {
        BenchConfig c = run.config();
        AtomicLong succeeded = new AtomicLong();
        try (HikariDataSource ds = run.pool("bench-failonce", Engines.poolSize(workers))) {
            DbTasks engine = Engines.builder(ds, c.claimBatch(), c.pollInterval(), workers)
                    .handler(KIND, Void.class, (context, payload) -> {
                        if (context.attempt() == 1) {
                            throw new IllegalStateException("first attempt fails");
                        }
                        succeeded.incrementAndGet();
                    })
                    .build();
            long deadline = System.nanoTime() + Burner.timeoutMillis(2 * tasks) * 1_000_000;
            long start = System.nanoTime();
            engine.start();
            try {
                while (succeeded.get() < tasks) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("failonce: " + succeeded.get() + " of " + tasks
                                + " tasks succeeded before the timeout");
                    }
                    Thread.sleep(2);
                }
                run.tasks().awaitDrained(2, Burner.timeoutMillis(tasks));
                return (System.nanoTime() - start) / 1e9;
            } finally {
                engine.stop(Duration.ofSeconds(10));
            }
        }
    }
}
