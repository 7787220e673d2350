package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Burns down the bench queue with the dbtasks engine and times it: from the engines' start until
 * the table shows nothing PENDING or RUNNING. In one process the handler's count tells when to start
 * checking the table; across processes only the table does.
 */
final class Burner {
    private final BenchRun run;

    Burner(BenchRun run) {
        this.run = run;
    }

    /**
     * @param workers worker threads in all, split evenly over {@code processes}
     * @param processes 1 for this JVM, more for child JVMs
     * @param expected the tasks in the queue
     * @return seconds until drained
     */
    double burn(int workers, int processes, long expected) throws Exception {
        return processes == 1
                ? burnInProcess(workers, expected, new AtomicLong(), true)
                : new ChildWorkers(run).burn(workers, processes, expected);
    }

    /**
     * Once per JVM, before the first measured in-process burn-down of the {@code burndown} and {@code
     * failonce} scenarios (the latency scenario, run after them, finds the JVM warm; scale, soak and
     * retention, run alone, do not warm up): an unmeasured burn-down of {@code
     * tasks} no-op tasks at {@code workers}, so the engine's code is compiled (JIT) before the clock
     * runs, as the child JVMs are warmed up before theirs ({@link ChildWorkers}) and each peer before
     * its first figure: a cold JVM's first burn-down runs far slower than the same one right after it
     * (see BENCHMARKS.md). Its rate is logged, not reported.
     * Leaves the table emptied.
     */
    void warmUpOnce(int workers, int tasks) throws Exception {
        if (!run.needsWarmUp("dbtasks")) {
            return;
        }
        run.tasks().reset();
        run.tasks().insertPending(tasks);
        double seconds = burnInProcess(workers, tasks, new AtomicLong(), false);
        Log.warmUp("dbtasks", "W=" + workers, tasks, seconds);
        run.tasks().reset();
    }

    /**
     * Burns down in this JVM.
     *
     * @param handled counts tasks run, so a caller can watch progress
     * @return seconds until drained
     */
    double burnInProcess(int workers, long expected, AtomicLong handled) throws Exception {
        return burnInProcess(workers, expected, handled, false);
    }

    private double burnInProcess(int workers, long expected, AtomicLong handled, boolean logCpu) throws Exception {
        return burnInProcess(workers, expected, handled, logCpu, true);
    }

    /**
     * Runs {@code expected} tasks in this JVM and times it, without waiting for the queue to drain:
     * for a queue that keeps tasks waiting behind a limit.
     *
     * @return seconds until {@code expected} tasks ran
     */
    double burnCount(int workers, long expected) throws Exception {
        return burnInProcess(workers, expected, new AtomicLong(), false, false);
    }

    /**
     * @param logCpu whether to log the CPU it took ({@link CpuMeter}), which on PostgreSQL waits a second
     * @param drain whether the time ends when the queue has nothing PENDING or RUNNING, not when the
     *     handlers ran {@code expected} tasks
     */
    private double burnInProcess(int workers, long expected, AtomicLong handled, boolean logCpu, boolean drain)
            throws Exception {
        try (HikariDataSource ds = run.pool("bench-engine", Engines.poolSize(workers))) {
            DbTasks engine = Engines.noop(ds, run.config(), workers, handled);
            long deadline = System.nanoTime() + timeoutMillis(expected) * 1_000_000;
            CpuMeter cpu = new CpuMeter(run, java.util.List.of());
            long start = System.nanoTime();
            engine.start();
            try {
                while (handled.get() < expected) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("burn-down ran " + handled.get() + " of " + expected
                                + " tasks before the timeout; is the engine claiming?");
                    }
                    Thread.sleep(2);
                }
                if (drain) {
                    run.tasks().awaitDrained(2, timeoutMillis(expected));
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                if (logCpu) {
                    Log.line(cpu.summary("W=" + workers + " P=1 (this JVM)", expected));
                }
                return seconds;
            } finally {
                engine.stop(Duration.ofSeconds(10));
                if (!run.config().slowListener().isZero()) {
                    Log.line("burn-down with a slow listener: " + engine.droppedEvents() + " event(s) dropped");
                }
            }
        }
    }

    /** A generous bound so a stuck engine fails the run instead of hanging it: 120 s plus 20 tasks/s. */
    static long timeoutMillis(long tasks) {
        return 120_000 + tasks * 50;
    }
}
