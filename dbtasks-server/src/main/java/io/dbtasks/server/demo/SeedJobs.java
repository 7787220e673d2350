package io.dbtasks.server.demo;

import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskKind;
import io.dbtasks.TaskRequest;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Component;

/**
 * Enqueues the three sample jobs of seed 003 at startup, with the seed's job codes as idempotency
 * keys: the first start runs them, and later starts find them present and add nothing. Turned off by
 * {@code dbtasks.server.seed-demo-jobs=false}.
 */
@Component
@ConditionalOnBooleanProperty(name = "dbtasks.server.seed-demo-jobs", matchIfMissing = true)
public class SeedJobs implements ApplicationRunner {
    /** The seed's retry interval of 3 seconds. */
    static final RetryPolicy SEED_RETRY = RetryPolicy.fixed(Duration.ofSeconds(3));

    private static final Logger log = LoggerFactory.getLogger(SeedJobs.class);

    private final DbTasks dbTasks;

    /** @param dbTasks the engine to enqueue on */
    public SeedJobs(DbTasks dbTasks) {
        this.dbTasks = dbTasks;
    }

    /** @return the seed's sample jobs as requests: no_param_job, sync_order_job, create_order_job */
    public static List<TaskRequest> requests() {
        return List.of(
                seed(DemoHandlers.NO_PARAM, null, "no_param_job", "No-param test job", "TEST-001"),
                seed(
                        DemoHandlers.SYNC,
                        new SyncOrder(10001L, "admin"),
                        "sync_order_job",
                        "Sync order job",
                        "ORDER-10001"),
                seed(
                        DemoHandlers.CREATE,
                        new OrderDto(20001L, "Tom", new BigDecimal("199.99")),
                        "create_order_job",
                        "Create order job",
                        "ORDER-20001"));
    }

    private static <P> TaskRequest seed(TaskKind<P> kind, P payload, String code, String name, String reference) {
        return TaskRequest.builder(kind)
                .payload(payload)
                .idempotencyKey(code)
                .name(name)
                .reference(reference)
                .maxAttempts(3)
                .retryPolicy(SEED_RETRY)
                .build();
    }

    /**
     * Enqueues the sample jobs. A failure (the database not reachable yet, a pooler refusing
     * connections) does not stop the server: the enqueue is retried on a background thread with
     * backoff from {@value #FIRST_RETRY_MILLIS} ms doubling to {@value #MAX_RETRY_MILLIS} ms, which
     * is safe because the job codes are idempotency keys.
     */
    @Override
    public void run(ApplicationArguments args) {
        if (tryEnqueue()) {
            return;
        }
        Thread retry = new Thread(() -> retryUntilDone(this::tryEnqueue, Thread::sleep), "dbtasks-seed-retry");
        retry.setDaemon(true);
        retry.start();
    }

    static final long FIRST_RETRY_MILLIS = 1000;
    static final long MAX_RETRY_MILLIS = 30_000;

    /** Pauses between tries; {@link Thread#sleep} in production. */
    @FunctionalInterface
    interface Sleeper {
        void sleep(long millis) throws InterruptedException;
    }

    /**
     * Calls {@code attempt} until it returns {@code true}, pausing with doubling backoff between
     * tries.
     *
     * @param attempt one try; {@code false} to be tried again
     * @param sleeper the pause
     * @return how many tries it took; ends early (returning the tries so far) if interrupted
     */
    static int retryUntilDone(java.util.function.BooleanSupplier attempt, Sleeper sleeper) {
        long pause = FIRST_RETRY_MILLIS;
        int tries = 0;
        while (true) {
            try {
                sleeper.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return tries;
            }
            tries++;
            if (attempt.getAsBoolean()) {
                return tries;
            }
            pause = Math.min(pause * 2, MAX_RETRY_MILLIS);
        }
    }

    /** @return whether every sample job is now present */
    private boolean tryEnqueue() {
        try {
            enqueueAll();
            return true;
        } catch (RuntimeException e) {
            log.warn("Enqueueing the seed jobs failed ({}); retrying in the background", e.getMessage());
            return false;
        }
    }

    private void enqueueAll() {
        for (TaskRequest request : requests()) {
            EnqueueResult result = dbTasks.enqueue(request);
            if (result.duplicate()) {
                log.info(
                        "Seed job {} already present as task {} ({})",
                        request.idempotencyKey(),
                        result.task().id(),
                        result.task().status());
            } else {
                log.info(
                        "Seed job {} enqueued as task {}",
                        request.idempotencyKey(),
                        result.task().id());
            }
        }
    }
}
