package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Latency: an engine with the fixed worker count; producers enqueue tasks at a steady rate, each
 * carrying {@code System.nanoTime()} taken just before its {@code enqueue} call; the handler records
 * its own {@code nanoTime()} against it. Producer and engine share the JVM, so the clock is the
 * same, and the engine's local wake-up on enqueue is part of what is measured.
 *
 * <p>First into an idle queue: one producer, one {@code enqueue} per task at the configured rate.
 * Then at load: for each fraction in {@link Workload#latencyLoads()}, the no-op burn-down's rate at
 * the same worker count is measured (once, just before) and tasks are enqueued at that fraction of
 * it, by {@value #LOAD_PRODUCERS} producer threads, each every {@value #TICK_MILLIS} ms storing with
 * {@code enqueueAll} what has fallen due since its last batch (so one slow commit is caught up by the
 * next batch instead of lowering the rate), every task of a batch stamped with the time before the
 * call.
 */
final class LatencyScenario implements Scenario {
    private static final String KIND = "bench.stamped";
    static final int LOAD_PRODUCERS = 2;
    static final long TICK_MILLIS = 10;

    /**
     * The payload: when the task was enqueued.
     *
     * @param enqueuedNanos {@code System.nanoTime()} before the enqueue call
     */
    public record Stamp(long enqueuedNanos) {}

    @Override
    public String name() {
        return "latency";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        List<Result> results = new ArrayList<>();
        results.add(measure(
                run,
                c.latencyRate(),
                1,
                c.latencyRate() + "/s for " + c.latencySeconds() + " s, W=" + c.fixedWorkers()));
        double best = -1;
        for (double load : c.workload().latencyLoads()) {
            if (load <= 0) {
                continue;
            }
            if (best < 0) {
                run.tasks().reset();
                run.tasks().insertPending(c.burndownTasks());
                best = c.burndownTasks()
                        / new Burner(run).burnInProcess(c.fixedWorkers(), c.burndownTasks(), new AtomicLong());
                Log.line(String.format(
                        Locale.ROOT,
                        "latency: no-op burn-down at W=%d: %.0f tasks/s, the maximum the loads are fractions of",
                        c.fixedWorkers(),
                        best));
            }
            int rate = (int) Math.max(1, Math.round(load * best));
            results.add(measure(
                    run,
                    rate,
                    LOAD_PRODUCERS,
                    String.format(
                            Locale.ROOT,
                            "load %.2f of max %.0f/s = %d/s for %d s, W=%d, %d producers",
                            load,
                            best,
                            rate,
                            c.latencySeconds(),
                            c.fixedWorkers(),
                            LOAD_PRODUCERS)));
        }
        return results;
    }

    private Result measure(BenchRun run, int rate, int producers, String label) throws Exception {
        BenchConfig c = run.config();
        int tasks = rate * c.latencySeconds();
        long[] latencies = new long[tasks];
        AtomicInteger recorded = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(tasks);
        run.tasks().reset();
        double seconds;
        try (HikariDataSource ds = run.pool("bench-latency", Engines.poolSize(c.fixedWorkers()) + producers)) {
            DbTasks engine = Engines.builder(ds, c.claimBatch(), c.pollInterval(), c.fixedWorkers())
                    .handler(KIND, Stamp.class, (context, stamp) -> {
                        long latency = System.nanoTime() - stamp.enqueuedNanos();
                        int i = recorded.getAndIncrement();
                        if (i < latencies.length) {
                            latencies[i] = latency;
                        }
                        done.countDown();
                    })
                    .build();
            engine.start();
            try {
                Thread.sleep(500); // let the claim loop reach its idle poll: the system is idle
                long start = System.nanoTime();
                if (producers == 1) {
                    produceOneByOne(engine, rate, tasks, start);
                } else {
                    produceInBatches(engine, rate, tasks, producers, start);
                }
                long enqueued = System.nanoTime();
                if (!done.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("latency: " + done.getCount() + " task(s) not run within 60 s");
                }
                seconds = (System.nanoTime() - start) / 1e9;
                double behind = (enqueued - start) / 1e9 - c.latencySeconds();
                if (behind > 0.1 * c.latencySeconds()) {
                    Log.line(String.format(
                            Locale.ROOT,
                            "latency: the producers took %.1f s longer than the %d s planned; the rate was not held",
                            behind,
                            c.latencySeconds()));
                }
            } finally {
                engine.stop(Duration.ofSeconds(10));
            }
        }
        double[] millis =
                Arrays.stream(latencies).mapToDouble(n -> n / 1e6).sorted().toArray();
        run.addLatencySamples(millis);
        Result r = Result.plain(name(), run.db(), label, tasks, seconds, Result.Percentiles.of(millis));
        Log.result(r);
        Log.line(String.format(
                Locale.ROOT,
                "latency %s %s: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, max %.2f ms",
                run.db().id(),
                label,
                r.latency().p50(),
                r.latency().p95(),
                r.latency().p99(),
                r.latency().max()));
        return r;
    }

    /** One {@code enqueue} per task, each at its due time. */
    private static void produceOneByOne(DbTasks engine, int rate, int tasks, long start) {
        long intervalNanos = 1_000_000_000L / rate;
        for (int i = 0; i < tasks; i++) {
            long due = start + i * intervalNanos;
            while (System.nanoTime() < due) {
                LockSupport.parkNanos(due - System.nanoTime());
            }
            engine.enqueue(stamped(System.nanoTime()));
        }
    }

    /**
     * {@code producers} threads, each enqueuing its share of the rate: every {@value #TICK_MILLIS} ms
     * whatever has fallen due since its last batch, in one {@code enqueueAll}.
     */
    private static void produceInBatches(DbTasks engine, int rate, int tasks, int producers, long start)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(producers);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                int share = (int) ((long) tasks * (p + 1) / producers - (long) tasks * p / producers);
                double perNano = rate / 1e9 / producers;
                long offset = TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS) * p / producers; // spread the ticks
                futures.add(pool.submit(() -> {
                    int sent = 0;
                    long tick = start + offset;
                    while (sent < share) {
                        tick += TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
                        while (System.nanoTime() < tick) {
                            LockSupport.parkNanos(tick - System.nanoTime());
                        }
                        long now = System.nanoTime();
                        int due = (int) Math.min(share, Math.floor((now - start) * perNano));
                        if (due > sent) {
                            List<TaskRequest> batch = new ArrayList<>(due - sent);
                            for (int i = sent; i < due; i++) {
                                batch.add(stamped(now));
                            }
                            engine.enqueueAll(batch);
                            sent = due;
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static TaskRequest stamped(long nanos) {
        return TaskRequest.builder(KIND)
                .queue(TaskTable.QUEUE)
                .payload(new Stamp(nanos))
                .build();
    }
}
