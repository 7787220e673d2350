package io.dbtasks.bench;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Retention under load: {@code soakTasks} SUCCEEDED tasks that finished 8 days ago (past the 7-day
 * default) lie in the table beside the burn-down's PENDING tasks; the burn-down runs once alone and
 * once while a retention sweep ({@link DbTasks#sweepRetention()}, 1,000 rows per statement) deletes
 * them, three alternated pairs at the fixed worker count. The old rows are inserted anew before each
 * run, so both runs start from the same table.
 */
final class RetentionScenario implements Scenario {
    static final int PAIRS = Integer.getInteger("dbtasks.bench.retention.pairs", 3);

    @Override
    public String name() {
        return "retention";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        Burner burner = new Burner(run);
        List<Result> results = new ArrayList<>();
        long old = c.soakTasks();
        int workers = c.fixedWorkers();
        for (int pair = 0; pair < PAIRS; pair++) {
            for (boolean sweeping : pair % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false}) {
                run.tasks().reset();
                run.tasks().insertOldSucceeded(old, Duration.ofDays(8));
                run.tasks().insertPending(c.burndownTasks());
                AtomicLong deleted = new AtomicLong(-1);
                AtomicReference<Throwable> failure = new AtomicReference<>();
                Thread sweeper = null;
                DbTasks producer = null;
                if (sweeping) {
                    producer = DbTasks.builder(run.admin())
                            .workers(false)
                            .migrate(false)
                            .retention(TaskStatus.SUCCEEDED, Duration.ofDays(7))
                            .build();
                    DbTasks p = producer;
                    sweeper = new Thread(() -> {
                        try {
                            deleted.set(p.sweepRetention());
                        } catch (Throwable t) {
                            failure.set(t);
                        }
                    });
                    sweeper.start();
                }
                long sweepStart = System.nanoTime();
                double seconds = burner.burn(workers, 1, c.burndownTasks());
                String during = "";
                if (sweeper != null) {
                    long left = run.tasks().count("status = 'SUCCEEDED'") - c.burndownTasks();
                    during = ", the sweep deleted " + (old - left) + " rows during the burn-down";
                }
                String config = sweeping
                        ? "W=" + workers + " beside " + old + " old rows, retention sweep running" + during
                        : "W=" + workers + " beside " + old + " old rows, no sweep";
                Result r = Result.throughput(
                        name(),
                        run.db(),
                        config,
                        sweeping ? "burn-down during retention" : "burn-down alone",
                        workers,
                        c.burndownTasks(),
                        seconds);
                Log.result(r);
                if (sweeper != null) {
                    sweeper.join();
                    producer.close();
                    if (failure.get() != null) {
                        throw new IllegalStateException("retention sweep failed", failure.get());
                    }
                    Log.line("retention: the sweep deleted " + deleted.get() + " rows in "
                            + (System.nanoTime() - sweepStart) / 1_000_000 + " ms");
                }
                results.add(r);
            }
        }
        return results;
    }
}
