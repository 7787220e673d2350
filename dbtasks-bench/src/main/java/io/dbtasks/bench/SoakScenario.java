package io.dbtasks.bench;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Soak: a large backlog (1M tasks by default) burned down by the fixed worker count, with the
 * throughput of every window (10 s by default) printed as it goes, so a slowdown as the table churns
 * (dead tuples, page splits, a growing attempt table) shows.
 */
final class SoakScenario implements Scenario {
    @Override
    public String name() {
        return "soak";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        run.tasks().reset();
        run.tasks().insertPending(c.soakTasks());
        AtomicLong handled = new AtomicLong();
        long windowMillis = c.soakWindow().toMillis();
        long start = System.nanoTime();
        long[] last = {0, start};
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        sampler.scheduleAtFixedRate(
                () -> window(run, handled, start, last), windowMillis, windowMillis, TimeUnit.MILLISECONDS);
        double seconds;
        try {
            seconds = new Burner(run).burnInProcess(c.fixedWorkers(), c.soakTasks(), handled);
        } finally {
            sampler.shutdown();
            sampler.awaitTermination(10, TimeUnit.SECONDS);
        }
        window(run, handled, start, last); // the last, partial window
        if (seconds < 60 && c.soakTasks() >= 1_000_000) {
            Log.line("soak: finished in under 60 s; raise --soak-tasks for a real soak");
        }
        Result r = Result.throughput(
                name(),
                run.db(),
                "W=" + c.fixedWorkers() + " window=" + c.soakWindow().toSeconds() + "s",
                "soak",
                c.fixedWorkers(),
                c.soakTasks(),
                seconds);
        Log.result(r);
        return List.of(r);
    }

    private static synchronized void window(BenchRun run, AtomicLong handled, long start, long[] last) {
        long now = System.nanoTime();
        long count = handled.get();
        double seconds = (now - last[1]) / 1e9;
        if (seconds < 0.05) {
            return;
        }
        BenchRun.SoakWindow w = new BenchRun.SoakWindow((now - start) / 1e9, count - last[0], seconds);
        run.addSoakWindow(w);
        Log.line(String.format(
                Locale.ROOT,
                "soak t=%.0fs: %d tasks in %.1f s = %.0f tasks/s",
                w.endSecond(),
                w.tasks(),
                seconds,
                w.tasksPerSecond()));
        last[0] = count;
        last[1] = now;
    }
}
