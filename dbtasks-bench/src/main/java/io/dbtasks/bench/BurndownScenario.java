package io.dbtasks.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * Burn-down: N no-op tasks are in the table before the engines start; W workers in P processes run
 * them until none is left. Once per worker count and process count, after one unmeasured
 * burn-down that warms this JVM up ({@link Burner#warmUpOnce}).
 */
final class BurndownScenario implements Scenario {
    @Override
    public String name() {
        return "burndown";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        Burner burner = new Burner(run);
        List<Result> results = new ArrayList<>();
        for (int processes : c.processes()) {
            if (processes > 1 && !run.allowsProcesses()) {
                Log.line("burndown: skipping P=" + processes + ", an in-memory H2 is not shared between JVMs");
                continue;
            }
            for (int workers : c.workers()) {
                if (processes == 1) {
                    burner.warmUpOnce(workers, c.burndownTasks());
                }
                run.tasks().reset();
                run.tasks().insertPending(c.burndownTasks());
                double seconds = burner.burn(workers, processes, c.burndownTasks());
                Result r = Result.throughput(
                        name(),
                        run.db(),
                        "W=" + workers + " P=" + processes + " batch=" + c.batchFor(workers),
                        "dbtasks P=" + processes,
                        workers,
                        c.burndownTasks(),
                        seconds);
                Log.result(r);
                results.add(r);
            }
        }
        return results;
    }
}
