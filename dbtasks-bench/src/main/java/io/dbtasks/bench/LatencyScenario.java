package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Latency: an idle engine with the fixed worker count; one producer enqueues tasks at a steady rate,
 * each carrying {@code System.nanoTime()} taken just before its {@code enqueue} call; the handler
 * records its own {@code nanoTime()} against it. Producer and engine share the JVM, so the clock is
 * the same, and the engine's local wake-up on enqueue is part of what is measured.
 */
final class LatencyScenario implements Scenario {
    private static final String KIND = "bench.stamped";

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
        int tasks = c.latencyRate() * c.latencySeconds();
        long[] latencies = new long[tasks];
        AtomicInteger recorded = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(tasks);
        run.tasks().reset();
        double seconds;
        try (HikariDataSource ds = run.pool("bench-latency", Engines.poolSize(c.fixedWorkers()) + 1)) {
            DbTasks engine = Engines.builder(ds, c.claimBatch(), c.pollInterval(), c.fixedWorkers())
                    .handler(KIND, Stamp.class, (context, stamp) -> {
                        latencies[recorded.getAndIncrement()] = System.nanoTime() - stamp.enqueuedNanos();
                        done.countDown();
                    })
                    .build();
            engine.start();
            try {
                Thread.sleep(500); // let the claim loop reach its idle poll: the system is idle
                long intervalNanos = 1_000_000_000L / c.latencyRate();
                long start = System.nanoTime();
                for (int i = 0; i < tasks; i++) {
                    long due = start + i * intervalNanos;
                    while (System.nanoTime() < due) {
                        LockSupport.parkNanos(due - System.nanoTime());
                    }
                    engine.enqueue(TaskRequest.builder(KIND)
                            .queue(TaskTable.QUEUE)
                            .payload(new Stamp(System.nanoTime()))
                            .build());
                }
                if (!done.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("latency: " + done.getCount() + " task(s) not run within 60 s");
                }
                seconds = (System.nanoTime() - start) / 1e9;
            } finally {
                engine.stop(Duration.ofSeconds(10));
            }
        }
        double[] millis =
                Arrays.stream(latencies).mapToDouble(n -> n / 1e6).sorted().toArray();
        run.addLatencySamples(millis);
        Result r = Result.plain(
                name(),
                run.db(),
                c.latencyRate() + "/s for " + c.latencySeconds() + " s, W=" + c.fixedWorkers(),
                tasks,
                seconds,
                Result.Percentiles.of(millis));
        Log.result(r);
        Log.line(String.format(
                java.util.Locale.ROOT,
                "latency %s: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, max %.2f ms",
                run.db().id(),
                r.latency().p50(),
                r.latency().p95(),
                r.latency().p99(),
                r.latency().max()));
        return List.of(r);
    }
}
