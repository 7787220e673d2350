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
 * <p>Each step starts a new engine and enqueues for {@value #WARMUP_SECONDS} s before the measured
 * window of {@code --latency-seconds}: tasks stamped in that first part are the step's start-up row
 * (a new pool's connections are new server backends, whose first statements parse and plan cold,
 * and a table emptied before the step is planned as empty until its statistics check runs), the rest
 * its steady-state row. Both are reported; the targets read the steady-state one.
 *
 * <p>First into an idle queue: one producer, one {@code enqueue} per task at the configured rate.
 * Then at load, for each fraction in {@link Workload#latencyLoads()}, against two maxima measured
 * (once, just before) at the same worker count:
 *
 * <ul>
 *   <li>the no-op burn-down's rate: run only, the queue filled beforehand;
 *   <li>the sustained rate: {@value #LOAD_PRODUCERS} producers enqueue batches of {@value
 *       #SUSTAINED_BATCH} as fast as they can while the engine runs, for {@code --latency-seconds};
 *       the tasks run in that window over its length (after {@value #WARMUP_SECONDS} s untimed).
 *       Enqueuing and running share the machine. When the producers outrun the engine, this is what
 *       it runs while enqueues take their share, a conservative figure for the most it holds (at a
 *       matched rate the producers would take less); when the engine keeps up, the maximum is at
 *       least this. Which of the two it was is logged, with the backlog left at the end.
 * </ul>
 *
 * <p>At load, tasks are enqueued by {@value #LOAD_PRODUCERS} producer threads, each every {@value
 * #TICK_MILLIS} ms storing with {@code enqueueAll} what has fallen due since its last batch (so one
 * slow commit is caught up by the next batch instead of lowering the rate), every task of a batch
 * stamped with the time before the call.
 */
final class LatencyScenario implements Scenario {
    private static final String KIND = "bench.stamped";
    static final int LOAD_PRODUCERS = 2;
    static final long TICK_MILLIS = 10;
    /** Seconds each step enqueues before its measured window; see the class comment. */
    static final int WARMUP_SECONDS = 2;
    /** Tasks per {@code enqueueAll} while the sustained maximum is measured. */
    static final int SUSTAINED_BATCH = 100;

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
        results.addAll(measure(
                run,
                c.latencyRate(),
                1,
                c.latencyRate() + "/s for " + c.latencySeconds() + " s, W=" + c.fixedWorkers()));
        double best = -1;
        double sustained = -1;
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
                sustained = sustained(run);
                Log.line(String.format(
                        Locale.ROOT,
                        "latency: enqueued and run at once, W=%d, %d producers: %.0f tasks/s held (%.2f of the"
                                + " burn-down), the sustained maximum",
                        c.fixedWorkers(),
                        LOAD_PRODUCERS,
                        sustained,
                        sustained / best));
            }
            for (boolean ofSustained : new boolean[] {false, true}) {
                double max = ofSustained ? sustained : best;
                int rate = (int) Math.max(1, Math.round(load * max));
                results.addAll(measure(
                        run,
                        rate,
                        LOAD_PRODUCERS,
                        String.format(
                                Locale.ROOT,
                                "load %.2f of %smax %.0f/s = %d/s for %d s, W=%d, %d producers",
                                load,
                                ofSustained ? "sustained " : "",
                                max,
                                rate,
                                c.latencySeconds(),
                                c.fixedWorkers(),
                                LOAD_PRODUCERS)));
            }
        }
        return results;
    }

    /**
     * Enqueues at {@code rate} for {@value #WARMUP_SECONDS} s and then for the measured window, into
     * a new engine.
     *
     * @return the steady-state row (tasks stamped in the measured window), then the start-up row
     */
    private List<Result> measure(BenchRun run, int rate, int producers, String label) throws Exception {
        BenchConfig c = run.config();
        int warmupTasks = rate * WARMUP_SECONDS;
        int tasks = rate * c.latencySeconds();
        // Either part may get more than its planned share: a batch due before the window opens can be
        // stamped after it (and a producer that falls behind moves more), so each holds every task.
        long[] warmup = new long[warmupTasks + tasks];
        long[] latencies = new long[warmupTasks + tasks];
        AtomicInteger warmupRecorded = new AtomicInteger();
        AtomicInteger recorded = new AtomicInteger();
        AtomicLong measuredFrom = new AtomicLong(Long.MAX_VALUE);
        CountDownLatch done = new CountDownLatch(warmupTasks + tasks);
        run.tasks().reset();
        double seconds;
        try (HikariDataSource ds = run.pool("bench-latency", Engines.poolSize(c.fixedWorkers()) + producers)) {
            DbTasks engine = Engines.builder(ds, c.claimBatch(), c.pollInterval(), c.fixedWorkers())
                    .handler(KIND, Stamp.class, (context, stamp) -> {
                        long latency = System.nanoTime() - stamp.enqueuedNanos();
                        boolean warm = stamp.enqueuedNanos() < measuredFrom.get();
                        int i = (warm ? warmupRecorded : recorded).getAndIncrement();
                        long[] into = warm ? warmup : latencies;
                        if (i < into.length) {
                            into[i] = latency;
                        }
                        done.countDown();
                    })
                    .build();
            engine.start();
            try {
                Thread.sleep(500); // let the claim loop reach its idle poll: the system is idle
                long start = System.nanoTime();
                measuredFrom.set(start + TimeUnit.SECONDS.toNanos(WARMUP_SECONDS));
                if (producers == 1) {
                    produceOneByOne(engine, rate, warmupTasks + tasks, start);
                } else {
                    produceInBatches(engine, rate, warmupTasks + tasks, producers, start);
                }
                long enqueued = System.nanoTime();
                if (!done.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("latency: " + done.getCount() + " task(s) not run within 60 s");
                }
                seconds = (System.nanoTime() - measuredFrom.get()) / 1e9;
                double behind = (enqueued - start) / 1e9 - WARMUP_SECONDS - c.latencySeconds();
                if (behind > 0.1 * c.latencySeconds()) {
                    Log.line(String.format(
                            Locale.ROOT,
                            "latency: the producers took %.1f s longer than the %d s planned; the rate was not held",
                            behind,
                            WARMUP_SECONDS + c.latencySeconds()));
                }
            } finally {
                engine.stop(Duration.ofSeconds(10));
            }
        }
        double[] millis = sortedMillis(latencies, recorded.get());
        run.addLatencySamples(millis);
        Result steady = row(run, label, millis, seconds);
        double[] startMillis = sortedMillis(warmup, warmupRecorded.get());
        if (startMillis.length == 0) {
            return List.of(steady);
        }
        Result startUp =
                row(run, label + ", start-up (its first " + WARMUP_SECONDS + " s)", startMillis, WARMUP_SECONDS);
        return List.of(steady, startUp);
    }

    private static double[] sortedMillis(long[] nanos, int recorded) {
        return Arrays.stream(nanos, 0, recorded)
                .mapToDouble(n -> n / 1e6)
                .sorted()
                .toArray();
    }

    private Result row(BenchRun run, String label, double[] millis, double seconds) {
        Result r = Result.plain(name(), run.db(), label, millis.length, seconds, Result.Percentiles.of(millis));
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

    /**
     * The sustained maximum: {@value #LOAD_PRODUCERS} producers enqueue batches of {@value
     * #SUSTAINED_BATCH} as fast as they can into a new engine; after {@value #WARMUP_SECONDS} s, the
     * tasks whose handler runs within the next {@code --latency-seconds} are counted.
     *
     * @return tasks per second run in that window
     */
    private static double sustained(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        AtomicLong from = new AtomicLong(Long.MAX_VALUE);
        AtomicLong until = new AtomicLong(Long.MAX_VALUE);
        AtomicLong ran = new AtomicLong();
        AtomicLong enqueued = new AtomicLong();
        run.tasks().reset();
        try (HikariDataSource ds =
                run.pool("bench-latency-sustained", Engines.poolSize(c.fixedWorkers()) + LOAD_PRODUCERS)) {
            DbTasks engine = Engines.builder(ds, c.claimBatch(), c.pollInterval(), c.fixedWorkers())
                    .handler(KIND, Stamp.class, (context, stamp) -> {
                        long now = System.nanoTime();
                        if (now >= from.get() && now < until.get()) {
                            ran.incrementAndGet();
                        }
                    })
                    .build();
            engine.start();
            ExecutorService pool = Executors.newFixedThreadPool(LOAD_PRODUCERS);
            try {
                Thread.sleep(500);
                long start = System.nanoTime();
                from.set(start + TimeUnit.SECONDS.toNanos(WARMUP_SECONDS));
                until.set(from.get() + TimeUnit.SECONDS.toNanos(c.latencySeconds()));
                List<Future<?>> futures = new ArrayList<>();
                for (int p = 0; p < LOAD_PRODUCERS; p++) {
                    futures.add(pool.submit(() -> {
                        while (System.nanoTime() < until.get()) {
                            long now = System.nanoTime();
                            List<TaskRequest> batch = new ArrayList<>(SUSTAINED_BATCH);
                            for (int i = 0; i < SUSTAINED_BATCH; i++) {
                                batch.add(stamped(now));
                            }
                            engine.enqueueAll(batch);
                            if (now >= from.get()) {
                                enqueued.addAndGet(SUSTAINED_BATCH);
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get();
                }
                long left = until.get() - System.nanoTime();
                if (left > 0) {
                    TimeUnit.NANOSECONDS.sleep(left);
                }
                long backlog = run.tasks().open();
                Log.line(String.format(
                        Locale.ROOT,
                        "latency: sustained maximum: in the %d s window %.0f tasks/s enqueued, %.0f/s run, %d left"
                                + " unrun at its end%s",
                        c.latencySeconds(),
                        enqueued.get() / (double) c.latencySeconds(),
                        ran.get() / (double) c.latencySeconds(),
                        backlog,
                        enqueued.get() < 1.05 * ran.get()
                                ? "; the engine kept up with the producers, so the maximum is at least this"
                                : "; the producers outran the engine, so this is what it runs while enqueues take"
                                        + " their share of the machine"));
            } finally {
                pool.shutdownNow();
                engine.stop(Duration.ofSeconds(10));
            }
        }
        run.tasks().reset();
        return ran.get() / (double) c.latencySeconds();
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
