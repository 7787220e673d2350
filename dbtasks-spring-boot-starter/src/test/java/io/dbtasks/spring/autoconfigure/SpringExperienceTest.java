package io.dbtasks.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.NonRetryableException;
import io.dbtasks.Task;
import io.dbtasks.TaskContext;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.once.RunOnceResult;
import io.dbtasks.spring.DuplicateKindException;
import io.dbtasks.spring.KindHandler;
import io.dbtasks.spring.Recurring;
import io.dbtasks.spring.RunOnce;
import io.dbtasks.spring.RunOnceSkippedException;
import io.dbtasks.spring.TaskListener;
import io.dbtasks.spring.TaskTemplate;
import io.dbtasks.spring.actuator.DbTasksEndpoint;
import io.dbtasks.spring.actuator.DbTasksHealthIndicator;
import io.dbtasks.spring.actuator.DbTasksMetrics;
import io.dbtasks.spring.actuator.DbTasksQueueGauges;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The Spring side on H2 with {@link ApplicationContextRunner}: {@code @TaskListener} discovery,
 * {@link TaskTemplate} in and out of transactions, {@code @RunOnce}, and every condition of the
 * actuator and metrics parts (present, absent, switched off).
 */
class SpringExperienceTest {
    record Mail(String to) {}

    static final Map<String, List<Object>> CALLS = new ConcurrentHashMap<>();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    DataSourceAutoConfiguration.class,
                    DbTasksAutoConfiguration.class,
                    TaskTemplateAutoConfiguration.class,
                    DbTasksObservabilityAutoConfiguration.class))
            .withPropertyValues(
                    "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                    "dbtasks.poll-interval=50ms",
                    "dbtasks.shutdown-timeout=5s");

    /** A bean with annotated handler methods in both parameter orders, and one without payload. */
    static class Mailer {
        final String id = UUID.randomUUID().toString();

        @TaskListener("mail.send")
        void send(Mail mail, TaskContext ctx) {
            CALLS.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>()).add(mail.to() + "#" + ctx.attempt());
        }

        @TaskListener("mail.flush")
        public void flush() {
            CALLS.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>()).add("flush");
        }

        @TaskListener("mail.refuse")
        void refuse(TaskContext ctx, Mail mail) {
            throw new NonRetryableException("no mail to " + mail.to());
        }
    }

    /** A TaskHandler bean declared by the annotation on its class; its payload type comes from the generic. */
    @TaskListener("mail.count")
    static class Counter implements io.dbtasks.TaskHandler<Mail> {
        final AtomicInteger count = new AtomicInteger();

        @Override
        public void handle(TaskContext context, Mail payload) {
            if (payload.to() != null) {
                count.incrementAndGet();
            }
        }
    }

    @Test
    void taskHandlerMethodsAndBeansAreDiscoveredAndRun() {
        runner.withBean(Mailer.class).withBean(Counter.class).run(context -> {
            assertThat(context).hasNotFailed();
            DbTasks dbTasks = context.getBean(DbTasks.class);
            assertThat(dbTasks.kinds()).contains("mail.send", "mail.flush", "mail.refuse", "mail.count");
            assertThat(dbTasks.kind("mail.send").orElseThrow().payloadType()).isEqualTo(Mail.class);
            assertThat(dbTasks.kind("mail.flush").orElseThrow().payloadType()).isEqualTo(Void.class);
            assertThat(dbTasks.kind("mail.count").orElseThrow().payloadType()).isEqualTo(Mail.class);
            TaskTemplate template = context.getBean(TaskTemplate.class);
            Task send = template.enqueue("mail.send", new Mail("a@example.com")).task();
            Task flush = template.enqueue("mail.flush", null).task();
            Task refuse =
                    template.enqueue("mail.refuse", new Mail("b@example.com")).task();
            Task count =
                    template.enqueue("mail.count", new Mail("c@example.com")).task();
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                assertThat(dbTasks.find(send.id()).orElseThrow().status()).isEqualTo(TaskStatus.SUCCEEDED);
                assertThat(dbTasks.find(flush.id()).orElseThrow().status()).isEqualTo(TaskStatus.SUCCEEDED);
                assertThat(dbTasks.find(refuse.id()).orElseThrow().status()).isEqualTo(TaskStatus.FAILED);
                assertThat(dbTasks.find(count.id()).orElseThrow().status()).isEqualTo(TaskStatus.SUCCEEDED);
            });
            String id = context.getBean(Mailer.class).id;
            assertThat(CALLS.get(id)).containsExactlyInAnyOrder("a@example.com#1", "flush");
            assertThat(dbTasks.find(refuse.id()).orElseThrow().lastError()).contains("no mail to b@example.com");
            assertThat(context.getBean(Counter.class).count).hasValue(1);
        });
    }

    static class Duplicate {
        @TaskListener("mail.send")
        void other(Mail mail) {}
    }

    @Test
    void aKindDeclaredTwiceFailsTheStartupWithAnAnalysisNamingBoth() {
        runner.withBean(Mailer.class)
                .withBean("duplicate", Duplicate.class)
                .withBean(
                        "kindHandler", KindHandler.class, () -> KindHandler.of("mail.flush", Void.class, (c, p) -> {}))
                .run(context -> {
                    assertThat(context).hasFailed();
                    Throwable failure = context.getStartupFailure();
                    assertThat(failure).rootCause().isInstanceOf(DuplicateKindException.class);
                    FailureAnalysis analysis = new DuplicateKindFailureAnalyzer().analyze(failure);
                    assertThat(analysis.getDescription())
                            .contains("more than one handler")
                            .containsAnyOf("'mail.send'", "'mail.flush'");
                    assertThat(analysis.getAction()).contains("@TaskListener");
                });
    }

    static class TwoPayloads {
        @TaskListener("bad")
        void bad(Mail a, Mail b) {}
    }

    @Test
    void aHandlerMethodWithTwoPayloadsFailsTheStartup() {
        runner.withBean(TwoPayloads.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("more than one payload parameter");
        });
    }

    @Test
    void taskTemplateJoinsASpringTransactionAndRollsBackWithIt() {
        runner.withConfiguration(AutoConfigurations.of(
                        DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class))
                .withBean(Mailer.class)
                .run(context -> {
                    TaskTemplate template = context.getBean(TaskTemplate.class);
                    DbTasks dbTasks = context.getBean(DbTasks.class);
                    TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
                    Long[] rolledBack = new Long[1];
                    tx.executeWithoutResult(status -> {
                        assertThat(template.inTransaction()).isTrue();
                        rolledBack[0] = template.enqueue("mail.send", new Mail("never@example.com"))
                                .task()
                                .id();
                        status.setRollbackOnly();
                    });
                    assertThat(dbTasks.find(rolledBack[0])).isEmpty();
                    Long committed = tx.execute(status -> template.enqueue("mail.send", new Mail("yes@example.com"))
                            .task()
                            .id());
                    await().atMost(Duration.ofSeconds(20))
                            .until(() ->
                                    dbTasks.find(committed).map(Task::status).orElse(null) == TaskStatus.SUCCEEDED);
                    assertThat(template.inTransaction()).isFalse();
                });
    }

    @Test
    void aWorkflowInsertedThroughTheTemplateCommitsAndRollsBackWithTheSpringTransaction() {
        runner.withConfiguration(AutoConfigurations.of(
                        DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class))
                .withBean(Mailer.class)
                .run(context -> {
                    TaskTemplate template = context.getBean(TaskTemplate.class);
                    DbTasks dbTasks = context.getBean(DbTasks.class);
                    TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
                    java.util.function.Supplier<io.dbtasks.workflow.Workflow> threeSteps =
                            () -> io.dbtasks.workflow.Workflow.named("welcome")
                                    .step("first", io.dbtasks.TaskRequest.of("mail.send", new Mail("1@example.com")))
                                    .step(
                                            "second",
                                            io.dbtasks.TaskRequest.of("mail.send", new Mail("2@example.com")),
                                            "first")
                                    .step(
                                            "third",
                                            io.dbtasks.TaskRequest.of("mail.send", new Mail("3@example.com")),
                                            "second")
                                    .build();
                    io.dbtasks.workflow.WorkflowRun[] rolledBack = new io.dbtasks.workflow.WorkflowRun[1];
                    tx.executeWithoutResult(status -> {
                        rolledBack[0] = template.insertWorkflow(threeSteps.get());
                        status.setRollbackOnly();
                    });
                    assertThat(dbTasks.workflows().find(rolledBack[0].id())).isEmpty();
                    assertThat(dbTasks.find(rolledBack[0].taskId("first"))).isEmpty();
                    io.dbtasks.workflow.WorkflowRun committed =
                            tx.execute(status -> template.insertWorkflow(threeSteps.get()));
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> dbTasks.find(committed.taskId("third"))
                                            .map(Task::status)
                                            .orElse(null)
                                    == TaskStatus.SUCCEEDED);
                });
    }

    @Test
    void withoutATransactionManagerTaskTemplateEnqueuesInItsOwnTransaction() {
        runner.withBean(Mailer.class).run(context -> {
            assertThat(context)
                    .doesNotHaveBean(PlatformTransactionManager.class)
                    .hasSingleBean(TaskTemplate.class);
            TaskTemplate template = context.getBean(TaskTemplate.class);
            assertThat(template.inTransaction()).isFalse();
            long id = template.enqueue(TaskRequest.of("mail.send", new Mail("x@example.com")))
                    .task()
                    .id();
            assertThat(context.getBean(DbTasks.class).find(id)).isPresent();
        });
    }

    @Test
    void twoDataSourcesWithoutAPrimaryMeanNoEngineTemplateHealthOrMeters() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        DbTasksAutoConfiguration.class,
                        TaskTemplateAutoConfiguration.class,
                        DbTasksObservabilityAutoConfiguration.class))
                .withBean("first", DataSource.class, () -> h2())
                .withBean("second", DataSource.class, () -> h2())
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(DbTasks.class)
                        .doesNotHaveBean(TaskTemplate.class)
                        .doesNotHaveBean(DbTasksHealthIndicator.class)
                        .doesNotHaveBean(DbTasksQueueGauges.class));
    }

    @Test
    void aPrimaryOfTwoDataSourcesCarriesTheEngine() {
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(DbTasksAutoConfiguration.class, TaskTemplateAutoConfiguration.class))
                .withBean("first", DataSource.class, () -> h2(), bd -> bd.setPrimary(true))
                .withBean("second", DataSource.class, () -> h2())
                .withPropertyValues("dbtasks.workers.enabled=false")
                .run(context -> assertThat(context).hasSingleBean(DbTasks.class).hasSingleBean(TaskTemplate.class));
    }

    @Test
    void anApplicationsOwnEngineBesideTwoDataSourcesGetsNoTemplateAndTheContextStarts() {
        DataSource first = h2();
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(DbTasksAutoConfiguration.class, TaskTemplateAutoConfiguration.class))
                .withBean("first", DataSource.class, () -> first)
                .withBean("second", DataSource.class, () -> h2())
                .withBean(
                        DbTasks.class,
                        () -> DbTasks.builder(first).workers(false).build())
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .hasSingleBean(DbTasks.class)
                        .doesNotHaveBean(TaskTemplate.class));
    }

    // ---- @RunOnce ----

    static class Reports {
        final AtomicInteger runs = new AtomicInteger();
        final AtomicInteger fixed = new AtomicInteger();

        @RunOnce(key = "report", period = RunOnce.Period.DAY, zone = "UTC")
        public String daily() {
            runs.incrementAndGet();
            return "ran";
        }

        @RunOnce(key = "strict", period = RunOnce.Period.NONE, ifDone = RunOnce.Skipped.THROW)
        public void strict() {}

        @Scheduled(fixedRate = 3_600_000, initialDelay = 3_600_000)
        @RunOnce
        public void hourlyRate() {
            fixed.incrementAndGet();
        }

        public int runs() {
            return runs.get();
        }

        public int fixedRuns() {
            return fixed.get();
        }

        @RunOnce(key = "boom", period = RunOnce.Period.NONE)
        public void boom() {
            throw new IllegalStateException("boom");
        }
    }

    @Test
    void runOnceRunsAMethodOncePerPeriodAndSkipsAsTold() {
        runner.withBean(Reports.class).run(context -> {
            Reports reports = context.getBean(Reports.class);
            assertThat(reports.daily()).isEqualTo("ran");
            assertThat(reports.daily()).as("skipped: already done today").isNull();
            assertThat(reports.runs()).isEqualTo(1);
            DbTasks dbTasks = context.getBean(DbTasks.class);
            String today = io.dbtasks.once.PeriodKeys.daily("report", Instant.now(), ZoneId.of("UTC"));
            RunOnceResult again = dbTasks.guards().runOnce(today, Duration.ofSeconds(5), l -> {});
            assertThat(again.outcome()).isEqualTo(RunOnceResult.Outcome.SKIPPED_DONE);

            reports.strict();
            org.assertj.core.api.Assertions.assertThatThrownBy(reports::strict)
                    .isInstanceOf(RunOnceSkippedException.class)
                    .hasMessageContaining("strict")
                    .hasMessageContaining("SKIPPED_DONE");

            reports.hourlyRate();
            reports.hourlyRate();
            assertThat(reports.fixedRuns()).isEqualTo(1);
            String slot = io.dbtasks.once.PeriodKeys.every(
                    "SpringExperienceTest.Reports.hourlyRate".substring("SpringExperienceTest.".length()),
                    Instant.now(),
                    Duration.ofHours(1));
            assertThat(dbTasks.guards()
                            .runOnce(slot, Duration.ofSeconds(5), l -> {})
                            .outcome())
                    .isEqualTo(RunOnceResult.Outcome.SKIPPED_DONE);

            org.assertj.core.api.Assertions.assertThatThrownBy(reports::boom).hasMessage("boom");
            org.assertj.core.api.Assertions.assertThatThrownBy(reports::boom)
                    .as("a failed key runs again")
                    .hasMessage("boom");
        });
    }

    @Test
    void theCronSlotIsTheLatestFireTimeAtOrBeforeTheCall() {
        CronExpression everyFiveMinutes = CronExpression.parse("0 */5 * * * *");
        ZoneId berlin = ZoneId.of("Europe/Berlin");
        Instant at = ZonedDateTime.of(2026, 11, 23, 14, 7, 30, 0, berlin).toInstant();
        assertThat(RunOnceInterceptor.lastFire(everyFiveMinutes, at, berlin))
                .isEqualTo(ZonedDateTime.of(2026, 11, 23, 14, 5, 0, 0, berlin).toInstant());
        CronExpression daily6 = CronExpression.parse("0 0 6 * * *");
        assertThat(RunOnceInterceptor.lastFire(daily6, at, berlin))
                .isEqualTo(ZonedDateTime.of(2026, 11, 23, 6, 0, 0, 0, berlin).toInstant());
        Instant early = ZonedDateTime.of(2026, 11, 23, 5, 0, 0, 0, berlin).toInstant();
        assertThat(RunOnceInterceptor.lastFire(daily6, early, berlin))
                .isEqualTo(ZonedDateTime.of(2026, 11, 22, 6, 0, 0, 0, berlin).toInstant());
        CronExpression yearly = CronExpression.parse("0 0 0 1 1 *");
        assertThat(RunOnceInterceptor.lastFire(yearly, at, berlin))
                .isEqualTo(ZonedDateTime.of(2026, 1, 1, 0, 0, 0, 0, berlin).toInstant());
        assertThat(RunOnceInterceptor.lastFire(
                        everyFiveMinutes,
                        ZonedDateTime.of(2026, 11, 23, 14, 5, 0, 0, berlin).toInstant(),
                        berlin))
                .as("a fire time itself is its own slot")
                .isEqualTo(ZonedDateTime.of(2026, 11, 23, 14, 5, 0, 0, berlin).toInstant());
    }

    static class Ticker {
        final AtomicInteger ticks = new AtomicInteger();

        @Recurring(fixedRate = "500ms", name = "ticker")
        void tick(TaskContext ctx) {
            ticks.incrementAndGet();
        }

        int ticks() {
            return ticks.get();
        }
    }

    @Test
    void recurringMethodsDeclareASchedulePerMethodAndRunEachSlotAsATask() {
        fresh().withBean(Ticker.class).run(context -> {
            DbTasks dbTasks = context.getBean(DbTasks.class);
            assertThat(dbTasks.kinds()).contains("ticker");
            assertThat(dbTasks.schedules().find("ticker")).isPresent();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> context.getBean(Ticker.class).ticks() >= 3);
            assertThat(dbTasks.list(io.dbtasks.TaskFilter.ALL, 0, 100).items())
                    .filteredOn(t -> t.kind().equals("ticker"))
                    .allSatisfy(t -> assertThat(t.idempotencyKey()).startsWith("schedule:ticker@"));
        });
    }

    static class CatchUp {
        @Recurring(
                cron = "* * * * * *",
                name = "catch-up",
                missedSlots = Recurring.Missed.RUN_EACH,
                missedSlotsMax = 5,
                misfireThreshold = "2s")
        void run() {}

        @Recurring(cron = "* * * * * *", name = "skipping", missedSlots = Recurring.Missed.SKIP)
        void skipping() {}

        @Recurring(cron = "* * * * * *", name = "latest")
        void latest() {}
    }

    @Test
    void recurringDeclaresEveryMissedSlotPolicyAndItsMisfireThreshold() {
        fresh().withBean(CatchUp.class).run(context -> {
            DbTasks dbTasks = context.getBean(DbTasks.class);
            io.dbtasks.schedule.ScheduleInfo catchUp =
                    dbTasks.schedules().find("catch-up").orElseThrow();
            assertThat(catchUp.missedSlots()).isEqualTo(io.dbtasks.schedule.MissedSlots.runEach(5));
            assertThat(catchUp.misfireThreshold()).isEqualTo(Duration.ofSeconds(2));
            assertThat(dbTasks.schedules().find("skipping").orElseThrow().missedSlots())
                    .isEqualTo(io.dbtasks.schedule.MissedSlots.skip());
            io.dbtasks.schedule.ScheduleInfo latest =
                    dbTasks.schedules().find("latest").orElseThrow();
            assertThat(latest.missedSlots()).isEqualTo(io.dbtasks.schedule.MissedSlots.runLatest());
            assertThat(latest.misfireThreshold()).isEqualTo(io.dbtasks.schedule.Schedule.DEFAULT_MISFIRE_THRESHOLD);
        });
    }

    static class BadCatchUp {
        @Recurring(cron = "* * * * * *", missedSlots = Recurring.Missed.RUN_EACH, missedSlotsMax = 0)
        void run() {}
    }

    @Test
    void recurringWithAnOutOfRangeRunEachFailsTheStartupNamingTheMethod() {
        fresh().withBean(BadCatchUp.class)
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("runEach(max) needs 1 to 1000"));
        fresh().withBean(BadCatchUp.class)
                .run(context -> assertThat(context.getStartupFailure())
                        .hasStackTraceContaining("@Recurring bean")
                        .hasStackTraceContaining("BadCatchUp.run"));
    }

    static class RecurringClash {
        @Recurring(cron = "0 0 * * * *", name = "mail.send")
        void clash() {}
    }

    @Test
    void aRecurringNameThatIsAlsoAHandlerKindFailsTheStartup() {
        fresh().withBean(Mailer.class)
                .withBean(RecurringClash.class)
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .isInstanceOf(DuplicateKindException.class)
                        .hasMessageContaining("mail.send"));
    }

    // ---- actuator and metrics conditions ----

    @Test
    void healthIndicatorIsUpWithDetailsWhereHealthSupportIsPresent() {
        runner.withConfiguration(AutoConfigurations.of(HealthContributorAutoConfiguration.class))
                .run(context -> {
                    assertThat(context).hasSingleBean(DbTasksHealthIndicator.class);
                    HealthIndicator indicator = context.getBean("dbtasksHealthIndicator", HealthIndicator.class);
                    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                        Health health = indicator.health(true);
                        assertThat(health.getStatus()).isEqualTo(Status.UP);
                        assertThat(health.getDetails())
                                .containsEntry("database", "h2")
                                .containsEntry("workersStarted", true)
                                .containsEntry("claimLoopsAlive", 1)
                                .containsKey("lastRescueAt");
                    });
                });
    }

    @Test
    void healthIndicatorIsAbsentWithoutHealthSupportOrWhenDisabled() {
        fresh().withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DbTasksHealthIndicator.class));
        fresh().withPropertyValues("management.health.dbtasks.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(DbTasksHealthIndicator.class));
    }

    @Test
    void endpointIsAvailableOnlyWhenExposed() {
        fresh().withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class))
                .run(context -> assertThat(context).doesNotHaveBean(DbTasksEndpoint.class));
        fresh().withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class))
                .withPropertyValues("management.endpoints.web.exposure.include=dbtasks", "dbtasks.queues.mail=3")
                .withBean(Mailer.class)
                .run(context -> {
                    DbTasksEndpoint endpoint = context.getBean(DbTasksEndpoint.class);
                    context.getBean(DbTasks.class)
                            .enqueue(TaskRequest.builder("mail.send")
                                    .queue("later")
                                    .payload(new Mail("z"))
                                    .runAfter(Duration.ofHours(1))
                                    .build());
                    Map<String, Object> body = endpoint.dbtasks();
                    assertThat(body).containsEntry("database", "h2").containsKey("kinds");
                    @SuppressWarnings("unchecked")
                    List<Map<String, Object>> queues = (List<Map<String, Object>>) body.get("queues");
                    assertThat(queues)
                            .anySatisfy(q ->
                                    assertThat(q).containsEntry("name", "mail").containsEntry("concurrency", 3))
                            .anySatisfy(q -> assertThat(q)
                                    .containsEntry("name", "later")
                                    .containsEntry("concurrency", 0)
                                    .containsEntry("pending", 1L)
                                    .containsEntry("dueNow", 0L));
                });
        fresh().withClassLoader(
                        new FilteredClassLoader(org.springframework.boot.actuate.endpoint.annotation.Endpoint.class))
                .withPropertyValues("management.endpoints.web.exposure.include=dbtasks")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DbTasksEndpoint.class));
    }

    @Test
    void metersCountEventsAndGaugesMeasureQueuesWhereAMeterRegistryExists() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        runner.withBean(MeterRegistry.class, () -> registry)
                .withBean(Mailer.class)
                .withPropertyValues("dbtasks.metrics.gauge-interval=100ms")
                .run(context -> {
                    assertThat(context).hasSingleBean(DbTasksQueueGauges.class);
                    TaskTemplate template = context.getBean(TaskTemplate.class);
                    for (int i = 0; i < 5; i++) {
                        template.enqueue("mail.send", new Mail("m" + i));
                    }
                    template.enqueue(TaskRequest.builder("mail.refuse")
                            .payload(new Mail("r"))
                            .maxAttempts(1)
                            .build());
                    template.enqueue(TaskRequest.builder("mail.send")
                            .queue("later")
                            .payload(new Mail("later"))
                            .runAfter(Duration.ofHours(1))
                            .build());
                    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                        assertThat(count(
                                        registry, DbTasksMetrics.ATTEMPTS, "kind", "mail.send", "outcome", "succeeded"))
                                .isEqualTo(5);
                        assertThat(count(registry, DbTasksMetrics.ATTEMPTS, "kind", "mail.refuse", "outcome", "failed"))
                                .isEqualTo(1);
                        assertThat(gauge(registry, DbTasksQueueGauges.TASKS, "queue", "later", "state", "pending"))
                                .isEqualTo(1);
                        assertThat(gauge(registry, DbTasksQueueGauges.TASKS, "queue", "default", "state", "failed"))
                                .isEqualTo(1);
                    });
                    assertThat(count(registry, DbTasksMetrics.ENQUEUED, "kind", "mail.send"))
                            .isEqualTo(6);
                    assertThat(count(registry, DbTasksMetrics.CLAIMED, "kind", "mail.send"))
                            .isEqualTo(5);
                    assertThat(registry.find(DbTasksMetrics.EXECUTION)
                                    .tags("kind", "mail.send", "outcome", "succeeded")
                                    .timer()
                                    .count())
                            .isEqualTo(5);
                    assertThat(registry.find(DbTasksMetrics.START_LAG)
                                    .tags("kind", "mail.send")
                                    .timer()
                                    .count())
                            .isEqualTo(5);
                    assertThat(gauge(registry, DbTasksQueueGauges.DUE, "queue", "later"))
                            .isZero();
                    assertThat(registry.get(DbTasksQueueGauges.DEADLOCKS)
                                    .functionCounter()
                                    .count())
                            .as("deadlock victims")
                            .isZero();
                });
    }

    @Test
    void noMetersWithoutMicrometerWithoutARegistryOrWhenDisabled() {
        fresh().withClassLoader(new FilteredClassLoader(MeterRegistry.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DbTasksQueueGauges.class));
        fresh().run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DbTasksQueueGauges.class));
        fresh().withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("dbtasks.metrics.enabled=false")
                .run(context -> {
                    assertThat(context).doesNotHaveBean(DbTasksQueueGauges.class);
                    assertThat(context.getBean(MeterRegistry.class)
                                    .find("dbtasks.tasks.running")
                                    .gauge())
                            .isNull();
                });
    }

    @Test
    void retentionAndLongRunningPropertiesReachTheEngine() {
        fresh().withPropertyValues(
                        "dbtasks.retention.interval=100ms",
                        "dbtasks.retention.succeeded=1h",
                        "dbtasks.long-running.kinds.mail.send=5s")
                .withBean(Mailer.class)
                .run(context -> {
                    DbTasks dbTasks = context.getBean(DbTasks.class);
                    long id = dbTasks.enqueue(TaskRequest.of("mail.send", new Mail("old")))
                            .task()
                            .id();
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> dbTasks.find(id).map(Task::status).orElse(null) == TaskStatus.SUCCEEDED);
                    try (var c = context.getBean(DataSource.class).getConnection();
                            var ps = c.prepareStatement("UPDATE dbtasks_task SET finished_at = ? WHERE id = ?")) {
                        ps.setObject(1, java.time.OffsetDateTime.now().minusHours(2));
                        ps.setLong(2, id);
                        ps.executeUpdate();
                    }
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> dbTasks.find(id).isEmpty());
                });
        fresh().withPropertyValues("dbtasks.retention.enabled=false", "dbtasks.long-running.threshold=-1s")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("must not be negative"));
    }

    @Test
    void perQueueRetentionPropertiesBindAndReachTheEngine() {
        fresh().withPropertyValues(
                        "dbtasks.retention.interval=100ms",
                        "dbtasks.retention.succeeded=0",
                        "dbtasks.retention.queues.default.succeeded=2s",
                        "dbtasks.retention.queues[mail.archive].failed=90d")
                .withBean(Mailer.class)
                .run(context -> {
                    DbTasksProperties.Retention r =
                            context.getBean(DbTasksProperties.class).getRetention();
                    assertThat(r.getQueues()).containsOnlyKeys("default", "mail.archive");
                    assertThat(r.getQueues().get("default").getSucceeded()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(r.getQueues().get("default").getFailed()).isNull();
                    assertThat(r.getQueues().get("mail.archive").getFailed()).isEqualTo(Duration.ofDays(90));
                    DbTasks dbTasks = context.getBean(DbTasks.class);
                    long id = dbTasks.enqueue(TaskRequest.of("mail.send", new Mail("old")))
                            .task()
                            .id();
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> dbTasks.find(id).map(Task::status).orElse(null) == TaskStatus.SUCCEEDED);
                    assertThat(dbTasks.find(id).orElseThrow().queue()).isEqualTo("default");
                    // The default keeps SUCCEEDED forever; only the queue's own age, 2 s, deletes it. The
                    // task ages for real: a sweep by a queue's own age reads from where the last ended, so
                    // a finish set back by hand would wait for the engine's daily read from the oldest row.
                    await().atMost(Duration.ofSeconds(20))
                            .until(() -> dbTasks.find(id).isEmpty());
                });
        fresh().withPropertyValues("dbtasks.retention.queues.default.succeeded=-1h")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("must not be negative"));
    }

    /** A gauge's value; an assertion error (so Awaitility waits on) until its first refresh registers it. */
    private static double gauge(MeterRegistry registry, String name, String... tags) {
        io.micrometer.core.instrument.Gauge gauge =
                registry.find(name).tags(tags).gauge();
        assertThat(gauge)
                .as("gauge %s %s", name, java.util.Arrays.toString(tags))
                .isNotNull();
        return gauge.value();
    }

    private static double count(MeterRegistry registry, String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count)
                .sum();
    }

    /** The runner on a database of its own, for tests that start more than one context. */
    private ApplicationContextRunner fresh() {
        return runner.withPropertyValues(
                "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    }

    private static DataSource h2() {
        org.h2.jdbcx.JdbcDataSource ds = new org.h2.jdbcx.JdbcDataSource();
        ds.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }
}
