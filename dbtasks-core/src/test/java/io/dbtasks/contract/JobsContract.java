package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.Attempt;
import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.Task;
import io.dbtasks.TaskStatus;
import io.dbtasks.contract.tripwire.TripwireLog;
import io.dbtasks.job.DuplicateJobException;
import io.dbtasks.job.JobDefinition;
import io.dbtasks.job.JobDefinitions;
import io.dbtasks.job.JobDisabledException;
import io.dbtasks.job.JobMethodRegistry;
import io.dbtasks.job.JobNotFoundException;
import io.dbtasks.job.JobPage;
import io.dbtasks.job.JobRun;
import io.dbtasks.job.JobRunRecord;
import io.dbtasks.job.JobRunRecordPage;
import io.dbtasks.job.JobRunSummary;
import io.dbtasks.job.JobTarget;
import io.dbtasks.job.StoredJob;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Job definitions: runs by code, business type, list of codes and failures; arguments
 * bound by Jackson to the allow-listed method's declared types only; anything not allow-listed ends
 * FAILED with a reason, and no class named only in stored text is ever loaded.
 */
public abstract class JobsContract extends EngineHarness {

    /** The seed's {@code OrderDTO}, as the test service's parameter type. */
    public record OrderDto(Long orderId, String userName, BigDecimal amount) {}

    /** The seed's order service: records what it was called with. Public, as job targets must be. */
    public static final class OrderTaskService {
        final List<String> calls = new CopyOnWriteArrayList<>();
        final List<OrderDto> created = new CopyOnWriteArrayList<>();

        public void noParamTask() {
            calls.add("noParamTask");
        }

        public void syncOrder(Long orderId, String operator) {
            calls.add("syncOrder " + orderId + " " + operator);
        }

        public void createOrder(OrderDto dto) {
            created.add(dto);
        }

        public void failing(String why) {
            calls.add("failing " + why);
            throw new IllegalStateException("failing on purpose: " + why);
        }

        /** Not allow-listed: a definition may name it, and must end FAILED. */
        public void notListed() {
            calls.add("notListed");
        }
    }

    private final OrderTaskService service = new OrderTaskService();
    private JobMethodRegistry registry;

    @BeforeEach
    void registry() throws Exception {
        registry = new JobMethodRegistry()
                .register("orderTaskService", service, "noParamTask")
                .register("orderTaskService", service, "syncOrder", Long.class, String.class)
                .register("orderTaskService", service, "createOrder", OrderDto.class)
                .register("orderTaskService", service, "failing", String.class);
    }

    private DbTasks worker() {
        return engine(b -> b.jobTargets(registry).queue("default", 4));
    }

    private static JobDefinition.Builder job(String code, String method, String arguments, String... types) {
        return JobDefinition.builder(code)
                .business("order", "ORDER-" + code)
                .target(JobTarget.of("orderTaskService", method, types))
                .arguments(arguments)
                .maxAttempts(2)
                .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(50)));
    }

    private StoredJob settled(DbTasks tasks, String code, TaskStatus status) {
        eventually()
                .alias("job " + code + " to end " + status)
                .until(() -> tasks.jobs().find(code).orElseThrow().lastStatus() == status);
        return tasks.jobs().find(code).orElseThrow();
    }

    @Test
    void seedJobsRunByCodeWithArgumentsBoundToTheDeclaredTypesIncludingTheOrderDto() {
        DbTasks tasks = worker();
        JobDefinitions jobs = tasks.jobs();
        jobs.create(job("no_param_job", "noParamTask", "[]").build());
        jobs.create(job("sync_order_job", "syncOrder", "[10001,\"admin\"]", "java.lang.Long", "java.lang.String")
                .build());
        jobs.create(job(
                        "create_order_job",
                        "createOrder",
                        "[{\"orderId\":20001,\"userName\":\"Tom\",\"amount\":199.99}]",
                        OrderDto.class.getName())
                .build());
        tasks.start();
        for (String code : List.of("no_param_job", "sync_order_job", "create_order_job")) {
            JobRun run = jobs.run(code);
            assertThat(run.duplicate()).isFalse();
            assertThat(run.runNo()).isEqualTo(1);
            settled(tasks, code, TaskStatus.SUCCEEDED);
        }
        assertThat(service.calls).containsExactlyInAnyOrder("noParamTask", "syncOrder 10001 admin");
        assertThat(service.created).containsExactly(new OrderDto(20001L, "Tom", new BigDecimal("199.99")));

        // The task carries the code, business type and id: in its payload, name and reference, and
        // queryably in dbtasks_job_run.
        StoredJob stored = jobs.find("create_order_job").orElseThrow();
        Task task = tasks.find(stored.lastTaskId()).orElseThrow();
        assertThat(task.kind()).isEqualTo(JobDefinitions.KIND);
        assertThat(task.name()).isEqualTo("create_order_job");
        assertThat(task.reference()).isEqualTo("ORDER-create_order_job");
        assertThat(task.payload()).contains("\"code\":\"create_order_job\"").contains("\"businessType\":\"order\"");
        assertThat(count(
                        "SELECT COUNT(*) FROM dbtasks_job_run WHERE task_id = ? AND job_code = ? AND business_type = ?"
                                + " AND business_id = ?",
                        task.id(),
                        "create_order_job",
                        "order",
                        "ORDER-create_order_job"))
                .isEqualTo(1);
        assertThat(stored.runs()).isEqualTo(1);
    }

    @Test
    void aTargetThatIsNotAllowListedEndsFailedWithWhatToAllowListAndItsClassIsNeverLoaded() {
        // No engine of the queue allow-lists these targets: none claims them, and they end FAILED with
        // the reason once that has lasted the grace period.
        DbTasks tasks =
                engine(b -> b.jobTargets(registry).queue("default", 4).unclaimableGrace(Duration.ofMillis(500)));
        // Only text names the tripwire class: as a parameter type, and as a polymorphic type id in the
        // arguments. Neither may load it.
        tasks.jobs()
                .create(job("evil_job", "exec", "[{\"@class\":\"" + TripwireLog.TRIPWIRE + "\"}]", TripwireLog.TRIPWIRE)
                        .business("attack", "1")
                        .target(JobTarget.of("tripwireBean", "exec", TripwireLog.TRIPWIRE))
                        .build());
        // An allow-listed bean and method, but a parameter type list naming the tripwire.
        tasks.jobs()
                .create(job("overload_job", "createOrder", "[{}]", TripwireLog.TRIPWIRE)
                        .business("attack", "2")
                        .build());
        // A real method of an allow-listed bean that is not itself allow-listed.
        tasks.jobs()
                .create(job("unlisted_job", "notListed", "[]")
                        .business("attack", "3")
                        .build());
        tasks.start();
        JobRunSummary summary = tasks.jobs().runBusinessType("attack");
        assertThat(summary.enqueued()).isEqualTo(3);

        StoredJob evil = settled(tasks, "evil_job", TaskStatus.FAILED);
        assertThat(evil.lastError())
                .contains("No live engine of queue 'default' can run job target tripwireBean.exec("
                        + TripwireLog.TRIPWIRE + ")")
                .contains("JobMethodRegistry");
        StoredJob overload = settled(tasks, "overload_job", TaskStatus.FAILED);
        assertThat(overload.lastError())
                .contains("does not match the parameter types of the allow-listed orderTaskService.createOrder("
                        + OrderDto.class.getName() + ")");
        StoredJob unlisted = settled(tasks, "unlisted_job", TaskStatus.FAILED);
        assertThat(unlisted.lastError()).contains("can run job target orderTaskService.notListed()");
        // Never claimed, so never run.
        assertThat(tasks.attempts(evil.lastTaskId())).isEmpty();
        assertThat(tasks.find(evil.lastTaskId()).orElseThrow().attempt()).isZero();
        assertThat(service.calls).doesNotContain("notListed");
        assertThat(TripwireLog.events()).isEmpty();
    }

    @Test
    void malformedArgumentsFailOnlyTheirOwnTaskWithAReasonAndOthersKeepRunning() {
        DbTasks tasks = worker();
        JobDefinitions jobs = tasks.jobs();
        jobs.create(job("bad_json", "syncOrder", "[10001, \"admin\"", "java.lang.Long", "java.lang.String")
                .build());
        jobs.create(job("bad_type", "syncOrder", "[\"not-a-number\", \"admin\"]", "java.lang.Long", "java.lang.String")
                .build());
        jobs.create(job("bad_count", "syncOrder", "[10001]", "java.lang.Long", "java.lang.String")
                .build());
        jobs.create(job("good", "syncOrder", "[7, \"ops\"]", "java.lang.Long", "java.lang.String")
                .build());
        tasks.start();
        assertThat(jobs.runBusinessType("order").enqueued()).isEqualTo(4);

        assertThat(settled(tasks, "bad_json", TaskStatus.FAILED).lastError()).contains("arguments are not valid JSON");
        assertThat(settled(tasks, "bad_type", TaskStatus.FAILED).lastError())
                .contains("argument 1 cannot be read as java.lang.Long");
        assertThat(settled(tasks, "bad_count", TaskStatus.FAILED).lastError())
                .contains("arguments must be a JSON array of 2 element(s)");
        settled(tasks, "good", TaskStatus.SUCCEEDED);
        assertThat(service.calls).containsExactly("syncOrder 7 ops");
        for (String code : List.of("bad_json", "bad_type", "bad_count")) {
            List<Attempt> attempts =
                    tasks.attempts(jobs.find(code).orElseThrow().lastTaskId());
            assertThat(attempts).as(code + " is not retried").hasSize(1);
        }
    }

    @Test
    void anUnknownPropertyInTheArgumentsFailsTheRunNamingItInsteadOfCallingTheMethodWithNulls() {
        DbTasks tasks = worker();
        JobDefinitions jobs = tasks.jobs();
        jobs.create(job(
                        "typo_job",
                        "createOrder",
                        "[{\"orderId\":20001,\"userNam\":\"Tom\",\"amount\":1}]",
                        OrderDto.class.getName())
                .build());
        tasks.start();
        jobs.run("typo_job");

        StoredJob failed = settled(tasks, "typo_job", TaskStatus.FAILED);
        assertThat(failed.lastError())
                .contains("argument 1")
                .contains("'userNam'")
                .contains("fix the definition");
        assertThat(service.created)
                .as("the method is never called with a null userName")
                .isEmpty();
        assertThat(tasks.attempts(failed.lastTaskId())).as("not retried").hasSize(1);
    }

    @Test
    void runsOfADefinitionArePagedNewestFirstWithStartFinishOutcomeDurationRetriesAndError() {
        DbTasks tasks = worker();
        JobDefinitions jobs = tasks.jobs();
        jobs.create(job("logged_job", "syncOrder", "[1, \"ops\"]", "java.lang.Long", "java.lang.String")
                .build());
        jobs.create(
                job("failing_job", "failing", "[\"boom\"]", "java.lang.String").build());
        assertThat(jobs.runs("logged_job", null, 10).items()).isEmpty();
        tasks.start();
        for (int i = 1; i <= 3; i++) {
            assertThat(jobs.run("logged_job", true).runNo()).isEqualTo(i);
            settled(tasks, "logged_job", TaskStatus.SUCCEEDED);
        }
        jobs.run("failing_job");
        StoredJob failing = settled(tasks, "failing_job", TaskStatus.FAILED);

        JobRunRecordPage first = jobs.runs("logged_job", null, 2);
        assertThat(first.items()).extracting(JobRunRecord::runNo).containsExactly(3L, 2L);
        assertThat(first.nextBeforeRunNo()).isEqualTo(2L);
        JobRunRecordPage second = jobs.runs("logged_job", first.nextBeforeRunNo(), 2);
        assertThat(second.items()).extracting(JobRunRecord::runNo).containsExactly(1L);
        assertThat(second.nextBeforeRunNo()).isNull();
        JobRunRecord newest = first.items().get(0);
        assertThat(newest.taskId())
                .isEqualTo(jobs.find("logged_job").orElseThrow().lastTaskId());
        assertThat(newest.outcome()).isEqualTo(TaskStatus.SUCCEEDED);
        assertThat(newest.retries()).isZero();
        assertThat(newest.error()).isNull();
        assertThat(newest.startedAt()).isAfterOrEqualTo(newest.enqueuedAt());
        assertThat(newest.finishedAt()).isAfterOrEqualTo(newest.startedAt());
        assertThat(newest.duration()).isEqualTo(Duration.between(newest.startedAt(), newest.finishedAt()));

        List<JobRunRecord> failedRuns = jobs.runs("failing_job", null, 10).items();
        assertThat(failedRuns).hasSize(1);
        JobRunRecord failed = failedRuns.get(0);
        assertThat(failed.taskId()).isEqualTo(failing.lastTaskId());
        assertThat(failed.outcome()).isEqualTo(TaskStatus.FAILED);
        assertThat(failed.retries()).as("two attempts, one retry").isEqualTo(1);
        assertThat(failed.error()).contains("failing on purpose: boom");
        List<Attempt> attempts = tasks.attempts(failing.lastTaskId());
        assertThat(failed.startedAt())
                .as("the first attempt's start")
                .isEqualTo(attempts.stream()
                        .map(Attempt::startedAt)
                        .min(java.util.Comparator.naturalOrder())
                        .orElseThrow());
        assertThat(failed.duration()).isPositive();
        assertThatThrownBy(() -> jobs.runs("logged_job", null, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void runByBusinessTypePagesThroughMoreDefinitionsThanOnePageAndDoesNotDuplicatePendingRuns() throws Exception {
        DbTasks producer = producer();
        int n = JobDefinitions.PAGE_SIZE * 2 + 37;
        insertDefinitions("bulk", n);
        insertDefinitions("other", 3);
        producer.jobs()
                .create(job("bulk_disabled", "noParamTask", "[]")
                        .business("bulk", null)
                        .enabled(false)
                        .build());

        JobRunSummary first = producer.jobs().runBusinessType("bulk");
        assertThat(first.enqueued()).isEqualTo(n);
        assertThat(first.disabled()).isEqualTo(1);
        assertThat(first.pages()).isEqualTo(3);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_job_run WHERE business_type = 'bulk'"))
                .isEqualTo(n);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE kind = ?", JobDefinitions.KIND))
                .isEqualTo(n);

        // Nothing ran yet (no workers), so a second run finds every run pending and adds none.
        JobRunSummary second = producer.jobs().runBusinessType("bulk");
        assertThat(second.enqueued()).isZero();
        assertThat(second.alreadyQueued()).isEqualTo(n);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(n);

        // Keyset listing visits each definition once.
        List<String> listed = new ArrayList<>();
        Long after = null;
        do {
            JobPage page = producer.jobs().list("bulk", after, 400);
            page.items().forEach(j -> listed.add(j.definition().code()));
            after = page.nextAfterId();
        } while (after != null);
        assertThat(listed).hasSize(n + 1).doesNotHaveDuplicates();
    }

    @Test
    void runCodesRunsEachListedDefinitionOnceAndReportsUnknownCodes() {
        DbTasks producer = producer();
        producer.jobs().create(job("a", "noParamTask", "[]").build());
        producer.jobs().create(job("b", "noParamTask", "[]").build());
        producer.jobs().create(job("c", "noParamTask", "[]").enabled(false).build());

        JobRunSummary summary = producer.jobs().runCodes(List.of("a", "b", "a", "c", "nope"));
        assertThat(summary.enqueued()).isEqualTo(2);
        assertThat(summary.disabled()).isEqualTo(1);
        assertThat(summary.notFound()).containsExactly("nope");
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(2);

        JobRun again = producer.jobs().run("a");
        assertThat(again.duplicate()).isTrue();
        assertThat(again.taskId())
                .isEqualTo(producer.jobs().find("a").orElseThrow().lastTaskId());
        assertThatThrownBy(() -> producer.jobs().run("c")).isInstanceOf(JobDisabledException.class);
        assertThatThrownBy(() -> producer.jobs().run("nope")).isInstanceOf(JobNotFoundException.class);
    }

    @Test
    void runByBusinessTypeTwiceRunsEachDefinitionOnce() {
        DbTasks tasks = worker();
        JobDefinitions jobs = tasks.jobs();
        int n = 40;
        for (int i = 0; i < n; i++) {
            jobs.create(job("twice-" + i, "syncOrder", "[" + i + ", \"twice\"]", "java.lang.Long", "java.lang.String")
                    .business("twice", String.valueOf(i))
                    .build());
        }
        tasks.start();
        assertThat(jobs.runBusinessType("twice").enqueued()).isEqualTo(n);
        // Immediately again, while some runs are pending, some running and some succeeded.
        JobRunSummary second = jobs.runBusinessType("twice");
        assertThat(second.enqueued()).as("second run: " + second).isZero();
        for (int i = 0; i < n; i++) {
            settled(tasks, "twice-" + i, TaskStatus.SUCCEEDED);
        }
        // And once every run has succeeded.
        JobRunSummary third = jobs.runBusinessType("twice");
        assertThat(third.enqueued()).as("third run: " + third).isZero();
        for (int i = 0; i < n; i++) {
            assertThat(jobs.find("twice-" + i).orElseThrow().runs()).isEqualTo(1);
        }
        assertThat(count("SELECT COUNT(*) FROM dbtasks_job_run WHERE business_type = 'twice'"))
                .isEqualTo(n);
        assertThat(service.calls).hasSize(n).doesNotHaveDuplicates();
    }

    @Test
    void succeededDefinitionsRunAgainOnlyWhenAskedByTypeByCodesAndByCode() {
        DbTasks tasks = worker();
        JobDefinitions jobs = tasks.jobs();
        jobs.create(job("again-1", "noParamTask", "[]").business("again", "1").build());
        jobs.create(job("again-2", "noParamTask", "[]").business("again", "2").build());
        tasks.start();
        assertThat(jobs.runBusinessType("again").enqueued()).isEqualTo(2);
        settled(tasks, "again-1", TaskStatus.SUCCEEDED);
        settled(tasks, "again-2", TaskStatus.SUCCEEDED);

        JobRunSummary byType = jobs.runBusinessType("again");
        assertThat(byType.enqueued()).isZero();
        assertThat(byType.alreadySucceeded()).isEqualTo(2);
        JobRunSummary byCodes = jobs.runCodes(List.of("again-1"));
        assertThat(byCodes.enqueued()).isZero();
        assertThat(byCodes.alreadySucceeded()).isEqualTo(1);
        long lastTask = jobs.find("again-2").orElseThrow().lastTaskId();
        JobRun byCode = jobs.run("again-2");
        assertThat(byCode.alreadySucceeded()).isTrue();
        assertThat(byCode.enqueued()).isFalse();
        assertThat(byCode.taskId()).isEqualTo(lastTask);
        assertThat(byCode.runNo()).isEqualTo(1);

        JobRunSummary all = jobs.runBusinessType("again", true);
        assertThat(all.enqueued()).isEqualTo(2);
        eventually()
                .until(() -> jobs.find("again-1").orElseThrow().runs() == 2
                        && jobs.find("again-1").orElseThrow().lastStatus() == TaskStatus.SUCCEEDED);
        assertThat(jobs.runCodes(List.of("again-1"), true).enqueued()).isEqualTo(1);
        settled(tasks, "again-2", TaskStatus.SUCCEEDED);
        JobRun forced = jobs.run("again-2", true);
        assertThat(forced.enqueued()).isTrue();
        assertThat(forced.runNo()).isEqualTo(3);
    }

    @Test
    void rerunFailedRunsOnlyTheDefinitionsWhoseLastTaskFailedWithTheirCurrentArguments() {
        DbTasks tasks = worker();
        JobDefinitions jobs = tasks.jobs();
        jobs.create(job("ok", "syncOrder", "[1, \"a\"]", "java.lang.Long", "java.lang.String")
                .build());
        jobs.create(job("broken", "failing", "[\"first\"]", "java.lang.String").build());
        tasks.start();
        jobs.runBusinessType("order");
        settled(tasks, "ok", TaskStatus.SUCCEEDED);
        StoredJob broken = settled(tasks, "broken", TaskStatus.FAILED);
        assertThat(broken.lastError()).contains("failing on purpose: first");
        assertThat(tasks.attempts(broken.lastTaskId())).hasSize(2); // an ordinary failure is retried

        // The operator fixes the definition, then re-runs the failures.
        jobs.update(broken.definition().toBuilder()
                .target(JobTarget.of("orderTaskService", "syncOrder", "java.lang.Long", "java.lang.String"))
                .arguments("[2, \"fixed\"]")
                .build());
        JobRunSummary rerun = jobs.rerunFailed(null);
        assertThat(rerun.enqueued()).isEqualTo(1);
        StoredJob fixed = settled(tasks, "broken", TaskStatus.SUCCEEDED);
        assertThat(fixed.runs()).isEqualTo(2);
        assertThat(jobs.find("ok").orElseThrow().runs()).isEqualTo(1);
        assertThat(service.calls).contains("syncOrder 2 fixed");
        assertThat(jobs.rerunFailed("order").enqueued()).isZero();
    }

    @Test
    void aDefinitionWithACronRunsAtEachSlotThroughItsScheduleWhichFollowsItsChanges() {
        DbTasks tasks =
                engine(b -> b.jobTargets(registry).queue("default", 4).schedulePollInterval(Duration.ofMillis(100)));
        JobDefinitions jobs = tasks.jobs();
        StoredJob created =
                jobs.create(job("every_second", "syncOrder", "[3, \"cron\"]", "java.lang.Long", "java.lang.String")
                        .cron("* * * * * *", "UTC")
                        .build());
        String schedule = JobDefinitions.SCHEDULE_PREFIX + created.id();
        assertThat(tasks.schedules().find(schedule)).hasValueSatisfying(s -> {
            assertThat(s.kind()).isEqualTo(JobDefinitions.CRON_KIND);
            assertThat(s.trigger().expression()).hasValue("* * * * * *");
        });
        tasks.start();
        eventually()
                .atMost(Duration.ofSeconds(30))
                .alias("three runs from the every-second cron")
                .until(() -> jobs.find("every_second").orElseThrow().runs() >= 3);
        assertThat(service.calls).contains("syncOrder 3 cron");
        // Each run is recorded once, with its own task.
        StoredJob now = jobs.find("every_second").orElseThrow();
        assertThat(count("SELECT COUNT(DISTINCT task_id) FROM dbtasks_job_run WHERE job_code = 'every_second'"))
                .isGreaterThanOrEqualTo(3);

        // A new cron replaces the schedule's trigger; disabling the job removes the schedule.
        jobs.update(now.definition().toBuilder()
                .cron("0 0 3 * * *", "Europe/Berlin")
                .build());
        assertThat(tasks.schedules().find(schedule).orElseThrow().trigger().expression())
                .hasValue("0 0 3 * * *");
        jobs.update(now.definition().toBuilder().enabled(false).build());
        assertThat(tasks.schedules().find(schedule)).isEmpty();
        jobs.update(now.definition());
        assertThat(tasks.schedules().find(schedule)).isPresent();
        assertThat(jobs.delete("every_second")).isTrue();
        assertThat(tasks.schedules().find(schedule)).isEmpty();
        assertThatThrownBy(() -> job("bad_cron", "noParamTask", "[]")
                        .cron("every minute", null)
                        .build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void definitionsAreCreatedUpdatedListedAndDeletedByCode() {
        JobDefinitions jobs = producer().jobs();
        JobDefinition d = job("crud", "noParamTask", null)
                .name("CRUD job")
                .description("seed 003")
                .cron("0 * * * * *", "Europe/Berlin")
                .build();
        StoredJob created = jobs.create(d);
        assertThat(created.definition()).isEqualTo(d);
        assertThat(created.definition().arguments()).isEqualTo("[]");
        assertThat(created.lastTaskId()).isNull();
        assertThatThrownBy(() -> jobs.create(d)).isInstanceOf(DuplicateJobException.class);

        StoredJob updated =
                jobs.update(d.toBuilder().name("renamed").enabled(false).build());
        assertThat(updated.definition().name()).isEqualTo("renamed");
        assertThat(updated.definition().enabled()).isFalse();
        assertThat(updated.id()).isEqualTo(created.id());
        assertThatThrownBy(() -> jobs.update(JobDefinition.builder("missing")
                        .business("x", null)
                        .target(JobTarget.of("a", "b"))
                        .build()))
                .isInstanceOf(JobNotFoundException.class);
        assertThat(jobs.delete("crud")).isTrue();
        assertThat(jobs.delete("crud")).isFalse();
        assertThat(jobs.find("crud")).isEmpty();
        assertThatThrownBy(() -> JobDefinition.builder("x")
                        .business("t", null)
                        .target(JobTarget.of("a", "b"))
                        .arguments("{\"not\":\"an array\"}")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("JSON array");
    }

    /** Inserts definitions in one batch (the API's create is one round trip each). */
    private void insertDefinitions(String businessType, int n) throws Exception {
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("INSERT INTO dbtasks_job (code, name, business_type,"
                        + " business_id, bean_name, method_name, parameter_types, arguments, max_attempts, backoff,"
                        + " backoff_initial_ms, backoff_max_ms, backoff_multiplier, backoff_jitter, enabled, runs,"
                        + " created_at, updated_at) VALUES (?, ?, ?, ?, 'orderTaskService', 'noParamTask', '[]',"
                        + " '[]', 3, 'FIXED', 1000, 1000, 1.0, 0.0, ?, 0, ?, ?)")) {
            for (int i : IntStream.range(0, n).toArray()) {
                ps.setString(1, businessType + "-" + i);
                ps.setString(2, "job " + i);
                ps.setString(3, businessType);
                ps.setString(4, String.valueOf(i));
                ps.setBoolean(5, true);
                dialect().setInstant(ps, 6, java.time.Instant.now());
                dialect().setInstant(ps, 7, java.time.Instant.now());
                ps.addBatch();
            }
            ps.executeBatch();
        }
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM dbtasks_job WHERE business_type = ?")) {
            ps.setString(1, businessType);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(n);
            }
        }
    }
}
