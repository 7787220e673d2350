package io.dbtasks.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Processes, like for like: the no-op burn-down with W workers in one child JVM and spread over two,
 * both warmed up the same way before the clock starts ({@link ChildWorkers}). The {@code burndown}
 * scenario's P = 1 runs in this JVM, after its own warm-up ({@link Burner#warmUpOnce}), and its
 * P = 2 in child JVMs; here both sides run in children, so the ratio P = 2 over P = 1 shows what a
 * second engine costs or gains, not what a cold JIT costs. On an in-memory H2, which child JVMs
 * cannot share, it gives one in-process P = 1 row instead.
 */
final class ProcessesScenario implements Scenario {
    @Override
    public String name() {
        return "processes";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        List<Result> results = new ArrayList<>();
        if (!run.allowsProcesses()) {
            Log.line("processes: measuring P=1 in this JVM only; an in-memory H2 is not shared between JVMs");
            run.tasks().reset();
            run.tasks().insertPending(c.burndownTasks());
            int w = c.fixedWorkers();
            double seconds = new Burner(run).burn(w, 1, c.burndownTasks());
            Result r = Result.plain(
                    name(),
                    run.db(),
                    "W=" + w + " P=1 in this JVM (no child JVMs on H2 in memory)",
                    c.burndownTasks(),
                    seconds,
                    null);
            Log.result(r);
            results.add(r);
            return results;
        }
        ChildWorkers children = new ChildWorkers(run);
        for (int workers : c.workers()) {
            double one = 0;
            for (int processes = 1; processes <= 2; processes++) {
                run.tasks().reset();
                run.tasks().insertPending(c.burndownTasks());
                double seconds = children.burn(workers, processes, c.burndownTasks());
                double rate = c.burndownTasks() / seconds;
                int warmup = c.workload().childWarmupTasks();
                String config = "W=" + workers + " P=" + processes + " in child JVMs, "
                        + (warmup > 0 ? "each warmed up on " + warmup + " tasks" : "cold");
                if (processes == 1) {
                    one = rate;
                } else {
                    config += String.format(Locale.ROOT, ": x P=1 %.2f", rate / one);
                }
                Result r = Result.plain(name(), run.db(), config, c.burndownTasks(), seconds, null);
                Log.result(r);
                results.add(r);
            }
        }
        return results;
    }
}
