package io.dbtasks.bench;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scale: claim cost as finished history grows. The table is topped up with SUCCEEDED rows to each
 * size (100k, 1M, 10M by default), then a fixed batch of pending tasks is burned down with the fixed
 * worker count while a retention thread deletes SUCCEEDED rows older than 30 days in batches of
 * 1000, as an application's clean-up job would. A flat tasks/s across sizes means the claim does not
 * pay for history. Before each burn-down the bulk-loaded table is settled ({@link TaskTable#settle}),
 * so the measurement sees a table that grew to that size, not the aftermath of loading it.
 */
final class ScaleScenario implements Scenario {
    static final int RETENTION_BATCH = 1000;

    @Override
    public String name() {
        return "scale";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        TaskTable tasks = run.tasks();
        tasks.reset();
        List<Result> results = new ArrayList<>();
        for (long size : c.scaleSizes()) {
            long history = tasks.succeeded();
            if (history < size) {
                Log.line("scale: inserting " + (size - history) + " history rows");
                tasks.insertHistory(size - history);
            }
            tasks.insertPending(c.scaleBatch());
            tasks.settle();
            Retention retention = new Retention(tasks);
            Thread thread = new Thread(retention, "bench-retention");
            thread.start();
            double seconds;
            try {
                seconds = new Burner(run).burn(c.fixedWorkers(), 1, c.scaleBatch());
            } finally {
                retention.stop();
                thread.join();
            }
            Result r = Result.throughput(
                    name(),
                    run.db(),
                    "history=" + size + " W=" + c.fixedWorkers() + " retention deleted " + retention.deleted(),
                    "scale",
                    c.fixedWorkers(),
                    c.scaleBatch(),
                    seconds);
            Log.result(r);
            results.add(r);
        }
        return results;
    }

    /** Deletes expired history in small batches until stopped, pausing when there is none. */
    private static final class Retention implements Runnable {
        private final TaskTable tasks;
        private final AtomicLong deleted = new AtomicLong();
        private volatile boolean running = true;
        private volatile SQLException failure;

        Retention(TaskTable tasks) {
            this.tasks = tasks;
        }

        @Override
        public void run() {
            try {
                while (running) {
                    int n = tasks.deleteExpired(RETENTION_BATCH);
                    deleted.addAndGet(n);
                    Thread.sleep(n == RETENTION_BATCH ? 20 : 500);
                }
            } catch (SQLException e) {
                failure = e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        void stop() throws SQLException {
            running = false;
            if (failure != null) {
                throw failure;
            }
        }

        long deleted() {
            return deleted.get();
        }
    }
}
