package io.dbtasks.bench;

import io.dbtasks.DbTasks;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/** The dbtasks engine as every scenario configures it: one bench queue, a no-op handler that counts. */
final class Engines {
    private Engines() {}

    /**
     * @param ds the engine's pool, at least {@link #poolSize(int)} connections
     * @param config the run's claim batch and poll interval
     * @param concurrency the engine's workers on the bench queue
     * @param handled incremented once per task run
     * @return a built, not yet started engine; the schema must exist
     */
    static DbTasks noop(DataSource ds, BenchConfig config, int concurrency, AtomicLong handled) {
        DbTasks.Builder b = builder(ds, config.claimBatch(), config.pollInterval(), concurrency)
                .handler(TaskTable.KIND, Void.class, (context, payload) -> handled.incrementAndGet());
        if (!config.slowListener().isZero()) {
            long sleep = config.slowListener().toMillis();
            b.listener(event -> {
                try {
                    Thread.sleep(sleep); // its queue fills and drops; the engine must not notice
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        return b.build();
    }

    /** As {@link #noop(DataSource, BenchConfig, int, AtomicLong)}, for a worker process. */
    static DbTasks noop(DataSource ds, int claimBatch, Duration poll, int concurrency, AtomicLong handled) {
        return builder(ds, claimBatch, poll, concurrency)
                .handler(TaskTable.KIND, Void.class, (context, payload) -> handled.incrementAndGet())
                .build();
    }

    /** @return a builder with the bench queue, claim batch and poll interval, and no migration */
    static DbTasks.Builder builder(DataSource ds, int claimBatch, Duration poll, int concurrency) {
        return DbTasks.builder(ds)
                .migrate(false)
                .queue(TaskTable.QUEUE, concurrency)
                .claimBatch(claimBatch)
                .pollInterval(poll)
                .shutdownTimeout(Duration.ofSeconds(10));
    }

    /** @return a pool size that serves the claim loop, {@code concurrency} completions and housekeeping */
    static int poolSize(int concurrency) {
        return concurrency + 4;
    }
}
