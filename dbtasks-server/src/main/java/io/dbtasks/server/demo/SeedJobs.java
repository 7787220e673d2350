package io.dbtasks.server.demo;

import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.job.DuplicateJobException;
import io.dbtasks.job.JobDefinition;
import io.dbtasks.job.JobRun;
import io.dbtasks.job.JobTarget;
import io.dbtasks.job.StoredJob;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Component;

/**
 * Stores the three sample order jobs as job definitions at startup (bean methods of {@link
 * OrderService}, allow-listed with {@code @TaskMethod}, one taking an {@link OrderDto}) and
 * runs each once: the first start runs them, later starts find them run and add nothing. {@code
 * no_param_job} also carries the cron {@value #EVERY_MINUTE}. Turned off by {@code
 * dbtasks.server.seed-demo-jobs=false}.
 */
@Component
@ConditionalOnBooleanProperty(DemoHandlers.ENABLED)
@ConditionalOnBooleanProperty(name = "dbtasks.server.seed-demo-jobs", matchIfMissing = true)
public class SeedJobs implements ApplicationRunner {
    /** The sample jobs' retry interval of 3 seconds. */
    static final RetryPolicy SEED_RETRY = RetryPolicy.fixed(Duration.ofSeconds(3));
    /** Every minute, at second 0 (cron with seconds). */
    public static final String EVERY_MINUTE = "0 * * * * *";

    private static final Logger log = LoggerFactory.getLogger(SeedJobs.class);

    private final DbTasks dbTasks;

    /** @param dbTasks the engine to store and run the definitions on */
    public SeedJobs(DbTasks dbTasks) {
        this.dbTasks = dbTasks;
    }

    /** @return the sample jobs: no_param_job, sync_order_job, create_order_job */
    public static List<JobDefinition> definitions() {
        return List.of(
                seed("no_param_job", "No-param test job", "TEST-001", JobTarget.of("orderService", "noParamTask"), "[]")
                        .cron(EVERY_MINUTE, "UTC")
                        .build(),
                seed(
                                "sync_order_job",
                                "Sync order job",
                                "ORDER-10001",
                                JobTarget.of("orderService", "syncOrder", "java.lang.Long", "java.lang.String"),
                                "[10001,\"admin\"]")
                        .build(),
                seed(
                                "create_order_job",
                                "Create order job",
                                "ORDER-20001",
                                JobTarget.of("orderService", "createOrder", OrderDto.class.getName()),
                                "[{\"orderId\":20001,\"userName\":\"Tom\",\"amount\":199.99}]")
                        .build());
    }

    private static JobDefinition.Builder seed(
            String code, String name, String businessId, JobTarget target, String arguments) {
        return JobDefinition.builder(code)
                .name(name)
                .business("order", businessId)
                .target(target)
                .arguments(arguments)
                .maxAttempts(3)
                .retryPolicy(SEED_RETRY);
    }

    /**
     * Stores and runs the sample jobs. A failure (the database not reachable yet, a pooler refusing
     * connections) does not stop the server: it is retried on a background thread with backoff from
     * {@value #FIRST_RETRY_MILLIS} ms doubling to {@value #MAX_RETRY_MILLIS} ms, which is safe
     * because a definition is created once per code and run only while it has no run.
     */
    @Override
    public void run(ApplicationArguments args) {
        if (tryStore()) {
            return;
        }
        Thread retry = new Thread(() -> retryUntilDone(this::tryStore, Thread::sleep), "dbtasks-seed-retry");
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

    /** @return whether every sample job is now stored and has run at least once */
    private boolean tryStore() {
        try {
            storeAll();
            return true;
        } catch (RuntimeException e) {
            log.warn("Storing the seed jobs failed ({}); retrying in the background", e.getMessage());
            return false;
        }
    }

    private void storeAll() {
        for (JobDefinition definition : definitions()) {
            String code = definition.code();
            StoredJob stored = dbTasks.jobs().find(code).orElse(null);
            if (stored == null) {
                try {
                    stored = dbTasks.jobs().create(definition);
                    log.info("Seed job {} stored as job definition {}", code, stored.id());
                } catch (DuplicateJobException raced) {
                    stored = dbTasks.jobs().find(code).orElseThrow();
                }
            }
            if (stored.runs() > 0) {
                log.info("Seed job {} present, {} run(s), last {}", code, stored.runs(), stored.lastStatus());
                continue;
            }
            JobRun run = dbTasks.jobs().run(code);
            log.info("Seed job {} run {} enqueued as task {}", code, run.runNo(), run.taskId());
        }
    }
}
