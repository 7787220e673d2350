package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskOptions;
import io.dbtasks.TaskRequest;
import io.dbtasks.batch.Batch;
import io.dbtasks.batch.BatchRequest;
import io.dbtasks.job.JobDefinition;
import io.dbtasks.job.JobMethodRegistry;
import io.dbtasks.job.JobTarget;
import io.dbtasks.schedule.Schedule;
import io.dbtasks.schedule.Trigger;
import io.dbtasks.testing.MutableClock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Every producer of tasks (a direct enqueue, a schedule's slot, a job's run, a batch's chunks) takes
 * its {@link TaskOptions} the same way: an unset option gets the engine's default, resolved at
 * enqueue in one place, and a set one is stored as given. Read back from the task row itself, the
 * columns the engine runs the task by.
 */
public abstract class TaskOptionsContract extends EngineHarness {
    private static final Instant T0 = Instant.parse("2026-11-23T10:00:00Z");

    /** Options with every field set, none equal to a default. */
    private static final TaskOptions SET = TaskOptions.builder()
            .queue("options-q")
            .priority(5)
            .maxAttempts(4)
            .retryPolicy(RetryPolicy.fixed(Duration.ofSeconds(3)))
            .timeout(Duration.ofSeconds(30))
            .build();

    private final MutableClock clock = new MutableClock(T0);

    /** What the engine runs a task by, as stored in its row. */
    record Stored(
            String queue,
            int priority,
            int maxAttempts,
            String backoff,
            long initialMs,
            @Nullable Long timeoutMs) {
        static Stored of(TaskOptions o) {
            return new Stored(
                    o.queue(),
                    o.priority(),
                    o.maxAttempts(),
                    o.retryPolicy().backoff().name(),
                    o.retryPolicy().initial().toMillis(),
                    o.timeout() == null ? null : o.timeout().toMillis());
        }
    }

    /** The producers, on one engine that enqueues but never claims. */
    private final class Producers {
        final DbTasks tasks;
        int seq;

        Producers(Consumer<DbTasks.Builder> defaults) {
            JobMethodRegistry registry;
            try {
                registry = new JobMethodRegistry().register("optionsBean", new Target(), "noop");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            this.tasks = engine(b -> {
                b.workers(false)
                        .scheduling(false)
                        .scheduleClock(clock)
                        .jobTargets(registry)
                        .chunkHandler("options-chunk", Void.class, (chunk, tx, p) -> {});
                defaults.accept(b);
            });
        }

        Stored direct(TaskOptions options) {
            return stored(tasks.enqueue(TaskRequest.builder("options-direct")
                            .options(options)
                            .build())
                    .task()
                    .id());
        }

        Stored schedule(TaskOptions options) {
            String name = "options-schedule-" + (++seq);
            tasks.schedules()
                    .create(Schedule.builder(name, Trigger.cron("*/10 * * * * *"))
                            .task("options-tick")
                            .options(options)
                            .build());
            assertThat(tasks.schedules().enqueueDue()).isEqualTo(1);
            return stored(
                    tasks.findByKey(Schedule.slotKey(name, T0)).orElseThrow().id());
        }

        Stored job(TaskOptions options) {
            String code = "options-job-" + (++seq);
            tasks.jobs()
                    .create(JobDefinition.builder(code)
                            .business("options", code)
                            .target(JobTarget.of("optionsBean", "noop"))
                            .options(options)
                            .build());
            tasks.jobs().run(code);
            return stored(tasks.jobs().find(code).orElseThrow().lastTaskId());
        }

        Stored batch(TaskOptions options) {
            Batch batch = tasks.batches()
                    .create(BatchRequest.builder("options-chunk", 1)
                            .name("options-batch-" + (++seq))
                            .options(options)
                            .build());
            long taskId = queryLong("SELECT task_id FROM dbtasks_batch_chunk WHERE batch_id = ?", batch.id());
            return stored(taskId);
        }
    }

    /** The bean a job calls. */
    public static final class Target {
        public void noop() {}
    }

    private long queryLong(String sql, long arg) {
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setLong(1, arg);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as(sql).isTrue();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private Stored stored(long taskId) {
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT queue, priority, max_attempts, backoff,"
                        + " backoff_initial_ms, timeout_ms FROM dbtasks_task WHERE id = ?")) {
            ps.setLong(1, taskId);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                long timeout = rs.getLong("timeout_ms");
                Long timeoutMs = rs.wasNull() ? null : timeout;
                return new Stored(
                        rs.getString("queue"),
                        rs.getInt("priority"),
                        rs.getInt("max_attempts"),
                        rs.getString("backoff"),
                        rs.getLong("backoff_initial_ms"),
                        timeoutMs);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void unsetOptionsGetTheBuiltInDefaultsFromEveryProducer() {
        Producers p = new Producers(b -> {});
        Stored expected = Stored.of(new TaskOptions(
                TaskOptions.DEFAULT_QUEUE,
                TaskOptions.DEFAULT_PRIORITY,
                TaskOptions.DEFAULT_MAX_ATTEMPTS,
                RetryPolicy.DEFAULT,
                null));
        assertThat(p.direct(TaskOptions.DEFAULTS)).isEqualTo(expected);
        assertThat(p.schedule(TaskOptions.DEFAULTS)).isEqualTo(expected);
        assertThat(p.batch(TaskOptions.DEFAULTS)).isEqualTo(expected);
        // A job stores its attempts and backoff with its definition: the built-in attempts, and a
        // job's own steady backoff.
        assertThat(JobDefinition.DEFAULT_MAX_ATTEMPTS).isEqualTo(TaskOptions.DEFAULT_MAX_ATTEMPTS);
        assertThat(p.job(TaskOptions.DEFAULTS))
                .isEqualTo(Stored.of(new TaskOptions(
                        TaskOptions.DEFAULT_QUEUE,
                        TaskOptions.DEFAULT_PRIORITY,
                        TaskOptions.DEFAULT_MAX_ATTEMPTS,
                        JobDefinition.DEFAULT_RETRY,
                        null)));
    }

    @Test
    void unsetOptionsGetTheEngineConfiguredDefaultsFromEveryProducer() {
        RetryPolicy engineRetry = RetryPolicy.fixed(Duration.ofSeconds(7));
        Producers p = new Producers(
                b -> b.defaultMaxAttempts(7).defaultRetryPolicy(engineRetry).defaultTimeout(Duration.ofSeconds(70)));
        Stored expected = Stored.of(new TaskOptions(
                TaskOptions.DEFAULT_QUEUE, TaskOptions.DEFAULT_PRIORITY, 7, engineRetry, Duration.ofSeconds(70)));
        assertThat(p.direct(TaskOptions.DEFAULTS)).isEqualTo(expected);
        assertThat(p.schedule(TaskOptions.DEFAULTS)).isEqualTo(expected);
        assertThat(p.batch(TaskOptions.DEFAULTS)).isEqualTo(expected);
        // The job's stored attempts and backoff stay as its definition holds them; the rest follows
        // the engine.
        assertThat(p.job(TaskOptions.DEFAULTS))
                .isEqualTo(Stored.of(new TaskOptions(
                        TaskOptions.DEFAULT_QUEUE,
                        TaskOptions.DEFAULT_PRIORITY,
                        JobDefinition.DEFAULT_MAX_ATTEMPTS,
                        JobDefinition.DEFAULT_RETRY,
                        Duration.ofSeconds(70))));
    }

    @Test
    void setOptionsAreHonouredByEveryProducerForEveryFieldItStores() {
        Producers p = new Producers(b -> b.defaultTimeout(Duration.ofSeconds(70)));
        assertThat(p.direct(SET)).isEqualTo(Stored.of(SET));
        assertThat(p.batch(SET)).isEqualTo(Stored.of(SET));
        // A schedule stores queue, priority and attempts; retry and timeout are the engine's.
        TaskOptions scheduled = SET.withRetryPolicy(null).withTimeout(null);
        assertThat(p.schedule(scheduled))
                .isEqualTo(
                        Stored.of(scheduled.withRetryPolicy(RetryPolicy.DEFAULT).withTimeout(Duration.ofSeconds(70))));
        // A job stores queue, attempts and retry; priority and timeout are the engine's.
        TaskOptions job = SET.withPriority(null).withTimeout(null);
        assertThat(p.job(job))
                .isEqualTo(
                        Stored.of(job.withPriority(TaskOptions.DEFAULT_PRIORITY).withTimeout(Duration.ofSeconds(70))));
    }

    @Test
    void aProducerRefusesOptionsItCannotStoreSayingWhich() {
        assertThatThrownBy(() ->
                        Schedule.builder("s", Trigger.cron("*/10 * * * * *")).options(SET))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("retryPolicy")
                .hasMessageContaining("timeout");
        assertThatThrownBy(() -> JobDefinition.builder("j").options(SET))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("priority")
                .hasMessageContaining("timeout");
    }

    @Test
    void eachProducerExposesTheOptionsItWasBuiltWith() {
        assertThat(TaskRequest.builder("k").options(SET).build().options()).isEqualTo(SET);
        assertThat(BatchRequest.builder("k", 1).options(SET).build().options()).isEqualTo(SET);
        TaskOptions scheduled = SET.withRetryPolicy(null).withTimeout(null);
        Schedule schedule = Schedule.builder("s", Trigger.cron("*/10 * * * * *"))
                .task("k")
                .options(scheduled)
                .build();
        assertThat(schedule.options()).isEqualTo(scheduled);
        assertThat(schedule.queue()).isEqualTo("options-q");
        assertThat(Schedule.of("d", Trigger.cron("*/10 * * * * *"), "k").queue())
                .isEqualTo(TaskOptions.DEFAULT_QUEUE);
        TaskOptions job = SET.withPriority(null).withTimeout(null);
        JobDefinition definition = JobDefinition.builder("j")
                .business("b", null)
                .target(JobTarget.of("optionsBean", "noop"))
                .options(job)
                .build();
        assertThat(definition.options()).isEqualTo(job);
        // The thin setters and options(...) agree.
        assertThat(TaskRequest.builder("k")
                        .queue("options-q")
                        .priority(5)
                        .maxAttempts(4)
                        .retryPolicy(RetryPolicy.fixed(Duration.ofSeconds(3)))
                        .timeout(Duration.ofSeconds(30))
                        .build()
                        .options())
                .isEqualTo(SET);
    }
}
