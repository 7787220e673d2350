package io.dbtasks.chaos;

import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Enqueues the chaos tasks {@code chaos-0 .. chaos-(n-1)} (idempotency keys), half of each kind, in
 * batches, spread over a given time so that faults strike while tasks keep arriving. A key is
 * acknowledged when {@link DbTasks#enqueueAll} returned for its batch; a batch that fails (the
 * database is down, the connection was killed) is retried with the same keys until it is
 * acknowledged, so its tasks exist once whatever happened to the failed call.
 *
 * <p>With {@code keys} greater than 0 (the limits workload) every task is transactional and has the
 * concurrency key {@code key-(i % keys)}.
 */
public final class Enqueuer {
    private final DbTasks client;
    private final Set<String> acknowledged;
    private final int concurrencyKeys;
    private final AtomicLong failedCalls = new AtomicLong();

    /**
     * @param client an engine without workers on the chaos database
     * @param acknowledged receives each acknowledged key; must be thread-safe
     */
    public Enqueuer(DbTasks client, Set<String> acknowledged) {
        this(client, acknowledged, 0);
    }

    /**
     * @param client an engine without workers on the chaos database
     * @param acknowledged receives each acknowledged key; must be thread-safe
     * @param keys concurrency keys to spread the tasks over, all transactional; 0: no keys, half of
     *     each kind
     */
    public Enqueuer(DbTasks client, Set<String> acknowledged, int keys) {
        this.client = client;
        this.acknowledged = acknowledged;
        this.concurrencyKeys = keys;
    }

    /**
     * @param i the task's number
     * @return the concurrency key of task {@code i}, or null without keys
     */
    public String concurrencyKey(int i) {
        return concurrencyKeys > 0 ? "key-" + (i % concurrencyKeys) : null;
    }

    /**
     * @param tasks how many tasks
     * @param batch keys per call
     * @param spread how long enqueuing should take in all, roughly
     * @throws InterruptedException if interrupted
     */
    public void run(int tasks, int batch, Duration spread) throws InterruptedException {
        long pauseNanos = spread.toNanos() / Math.max(1, (tasks + batch - 1) / batch);
        long next = System.nanoTime();
        for (int from = 0; from < tasks; from += batch) {
            List<TaskRequest> requests = new ArrayList<>();
            List<String> keys = new ArrayList<>();
            for (int i = from; i < Math.min(tasks, from + batch); i++) {
                String key = "chaos-" + i;
                keys.add(key);
                requests.add(TaskRequest.builder(
                                concurrencyKeys > 0 || i % 2 == 0 ? ChaosSchema.TX_KIND : ChaosSchema.PLAIN_KIND)
                        .queue(ChaosSchema.QUEUE)
                        .concurrencyKey(concurrencyKey(i))
                        .idempotencyKey(key)
                        .maxAttempts(50)
                        .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(200)))
                        .build());
            }
            while (true) {
                try {
                    client.enqueueAll(requests);
                    acknowledged.addAll(keys);
                    break;
                } catch (RuntimeException e) {
                    failedCalls.incrementAndGet();
                    Thread.sleep(200);
                }
            }
            next += pauseNanos;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            }
        }
    }

    /** @return enqueue calls that failed and were retried */
    public long failedCalls() {
        return failedCalls.get();
    }
}
