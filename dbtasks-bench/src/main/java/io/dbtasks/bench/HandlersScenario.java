package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Realistic handlers: burn-downs whose handler sleeps a few milliseconds, a stand-in for I/O, at
 * engine concurrencies W up to hundreds, on the engine's own platform threads and on virtual threads
 * ({@code executor(...)} with {@code Executors.newVirtualThreadPerTaskExecutor()}, Java 21+). While
 * the database keeps up, throughput should follow the ideal W / sleep; each row gives that ideal,
 * the fraction of it reached, and the most handlers seen running at once (which should reach W).
 * A sleep of 0 is the no-op burn-down at the same W and executor; when it is listed first, the
 * rows after it also give their ratio to it ("x no-op"), the other half of the target "W / sleep or
 * the no-op rate, whichever is lower".
 *
 * <p>An unmeasured no-op burn-down warms the JVM up first, and before each executor's first row one
 * unmeasured run on that executor, at the largest W with the shortest sleep listed, compiles what
 * only handlers that sleep use (on virtual threads: parking, unmounting and the delay scheduler): run
 * twice in one JVM without it, W = 512 with 10 ms sleeps on virtual threads reached 0.74-0.77 of its
 * ideal the first time and 0.80-0.88 the second (PostgreSQL, 150,000 tasks, three JVMs). The engine's pool is capped ({@link Workload#handlerPool()}): a handler that only sleeps holds
 * no connection, and W connections would exceed PostgreSQL's default limit of 100 at W = 128.
 */
final class HandlersScenario implements Scenario {
    static final String PLATFORM = "platform";
    static final String VIRTUAL = "virtual";
    static final int WARMUP_WORKERS = 32;

    @Override
    public String name() {
        return "handlers";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        Workload w = c.workload();
        List<Result> results = new ArrayList<>();
        // Unmeasured: the scenario may run alone in a fresh JVM (run-benchmarks.sh runs it on a
        // second JDK), and its first row would otherwise pay for the JIT.
        run.tasks().reset();
        run.tasks().insertPending(w.handlerTasks());
        double warm = new Burner(run).burnInProcess(WARMUP_WORKERS, w.handlerTasks(), new AtomicLong());
        Log.line(String.format(
                Locale.ROOT,
                "handlers: warm-up burn-down of %d no-op tasks at W=%d in %.1f s (not reported)",
                w.handlerTasks(),
                WARMUP_WORKERS,
                warm));
        for (String executor : w.executors()) {
            if (!executor.equals(PLATFORM) && !executor.equals(VIRTUAL)) {
                throw new IllegalArgumentException("--executor takes platform or virtual, not " + executor);
            }
            if (executor.equals(VIRTUAL) && !VirtualThreads.available()) {
                Log.line("handlers: skipping executor=virtual: " + VirtualThreads.unavailableReason());
                continue;
            }
            warmUp(run, executor);
            Map<Integer, Double> noop = new HashMap<>(); // tasks/s with sleep 0, by W
            for (int sleep : w.handlerSleeps()) {
                for (int workers : w.handlerWorkers()) {
                    Result r = measure(run, executor, sleep, workers, noop.get(workers), true);
                    if (sleep == 0) {
                        noop.put(workers, r.tasksPerSecond());
                    }
                    results.add(r);
                }
            }
        }
        if (results.isEmpty()) {
            throw new IllegalStateException("handlers: nothing measured; --executor " + w.executors());
        }
        return results;
    }

    /** One unmeasured run on {@code executor}: the largest W, the shortest sleep listed (0 if only 0). */
    private void warmUp(BenchRun run, String executor) throws Exception {
        Workload w = run.config().workload();
        int workers =
                w.handlerWorkers().stream().mapToInt(Integer::intValue).max().orElseThrow();
        int sleep = w.handlerSleeps().stream()
                .mapToInt(Integer::intValue)
                .filter(s -> s > 0)
                .min()
                .orElse(0);
        Result r = measure(run, executor, sleep, workers, null, false);
        Log.line("handlers: warm-up on " + executor + " threads (not reported): " + r.config() + ", "
                + String.format(Locale.ROOT, "%.0f", r.tasksPerSecond()) + " tasks/s");
    }

    /**
     * @param noop the no-op rate at the same W and executor measured before, or {@code null}
     * @param logged whether to print it as a result (not for a warm-up)
     */
    private Result measure(BenchRun run, String executor, int sleepMillis, int workers, Double noop, boolean logged)
            throws Exception {
        BenchConfig c = run.config();
        int tasks = c.workload().handlerTasksFor(workers, sleepMillis);
        run.tasks().reset();
        run.tasks().insertPending(tasks);
        AtomicLong handled = new AtomicLong();
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        Optional<ExecutorService> threads = executor.equals(VIRTUAL) ? VirtualThreads.newExecutor() : Optional.empty();
        double seconds;
        int poolSize = Math.min(Engines.poolSize(workers), c.workload().handlerPool());
        try (HikariDataSource ds = run.pool("bench-handlers", poolSize)) {
            DbTasks.Builder b = Engines.builder(ds, c.claimBatch(), c.pollInterval(), workers)
                    .handler(TaskTable.KIND, Void.class, (context, payload) -> {
                        peak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                        try {
                            if (sleepMillis > 0) {
                                Thread.sleep(sleepMillis);
                            }
                        } finally {
                            inFlight.decrementAndGet();
                        }
                        handled.incrementAndGet();
                    });
            threads.ifPresent(b::executor);
            DbTasks engine = b.build();
            long deadline = System.nanoTime() + Burner.timeoutMillis(tasks) * 1_000_000;
            long start = System.nanoTime();
            engine.start();
            try {
                while (handled.get() < tasks) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(
                                "handlers: " + handled.get() + " of " + tasks + " tasks ran before the timeout");
                    }
                    Thread.sleep(2);
                }
                run.tasks().awaitDrained(2, Burner.timeoutMillis(tasks));
                seconds = (System.nanoTime() - start) / 1e9;
            } finally {
                engine.stop(Duration.ofSeconds(10));
                threads.ifPresent(ExecutorService::shutdown);
            }
        }
        double rate = tasks / seconds;
        String ideal = sleepMillis > 0
                ? String.format(
                        Locale.ROOT,
                        "ideal %.0f/s, x ideal %.2f",
                        workers * 1000.0 / sleepMillis,
                        rate * sleepMillis / (workers * 1000.0))
                : "no-op";
        if (noop != null) {
            ideal += String.format(Locale.ROOT, ", x no-op %.2f", rate / noop);
        }
        String config = String.format(
                Locale.ROOT,
                "W=%d sleep=%dms %s%s pool=%d: %s, peak %d running",
                workers,
                sleepMillis,
                executor,
                executor.equals(VIRTUAL) ? " (Java " + VirtualThreads.javaVersion() + ")" : "",
                poolSize,
                ideal,
                peak.get());
        Result r = Result.plain(name(), run.db(), config, tasks, seconds, null);
        if (logged) {
            Log.result(r);
        }
        return r;
    }
}
