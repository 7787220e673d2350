package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.NonRetryableException;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.workflow.Dependency;
import io.dbtasks.workflow.StepState;
import io.dbtasks.workflow.Workflow;
import io.dbtasks.workflow.WorkflowRun;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Workflows: a step runs once, and only after every step it depends on has succeeded, on several
 * engines sharing the database; a failed dependency cancels its dependents with the reason and a
 * retry lets them go on; a graph inserted in a transaction that rolls back leaves nothing. The
 * order is checked from the attempt rows' start and finish times, written by the database.
 */
public abstract class WorkflowContract extends EngineHarness {
    /** A step's payload: which workflow and step it is. */
    public record Step(String workflow, String name) {}

    /** Handler runs per task id. */
    private final Map<Long, Integer> runs = new ConcurrentHashMap<>();
    /** The dependency results each step read, by task id. */
    private final Map<Long, Map<String, String>> read = new ConcurrentHashMap<>();

    /** Three engines of two handlers each on the queue "wf". */
    private List<DbTasks> engines(java.util.function.Predicate<Step> fails) {
        List<DbTasks> started = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            DbTasks e = engine(b -> b.queue("wf", 2).handler("step", Step.class, (ctx, step) -> {
                runs.merge(ctx.taskId(), 1, Integer::sum);
                read.put(ctx.taskId(), ctx.dependencyResults());
                if (fails.test(step)) {
                    throw new NonRetryableException("step " + step.name() + " broke");
                }
                ctx.setResult("{\"step\":\"" + step.name() + "\"}");
            }));
            started.add(e);
        }
        started.forEach(DbTasks::start);
        return started;
    }

    private static TaskRequest step(String workflow, String name) {
        return TaskRequest.builder("step")
                .payload(new Step(workflow, name))
                .queue("wf")
                .build();
    }

    /** The attempt rows of a task: {started_at, finished_at, outcome}. */
    private List<Object[]> attempts(long taskId) throws Exception {
        List<Object[]> rows = new ArrayList<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT started_at, finished_at, outcome FROM dbtasks_attempt WHERE task_id = ? ORDER BY id")) {
            ps.setLong(1, taskId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(new Object[] {
                        dialect().getInstant(rs, "started_at"), dialect().getInstant(rs, "finished_at"), rs.getString(3)
                    });
                }
            }
        }
        return rows;
    }

    @Test
    void theDiamondRunsDOnceAfterBAndCSucceededAndDReadsBothResults() throws Exception {
        List<DbTasks> all = engines(s -> false);
        WorkflowRun run = all.get(0)
                .workflows()
                .insert(Workflow.named("diamond")
                        .step("d", step("diamond", "d"), "b", "c")
                        .step("b", step("diamond", "b"), "a")
                        .step("c", step("diamond", "c"), "a")
                        .step("a", step("diamond", "a"))
                        .build());
        assertThat(run.steps()).extracting(StepState::name).containsExactly("a", "b", "c", "d");
        assertThat(run.step("a").orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        long d = run.taskId("d");
        awaitStatus(all.get(0), d, TaskStatus.SUCCEEDED);

        for (String s : List.of("a", "b", "c", "d")) {
            assertThat(runs.get(run.taskId(s))).as("runs of " + s).isEqualTo(1);
            assertThat(attempts(run.taskId(s))).hasSize(1);
        }
        Object[] a = attempts(run.taskId("a")).get(0);
        Object[] b = attempts(run.taskId("b")).get(0);
        Object[] c = attempts(run.taskId("c")).get(0);
        Object[] dd = attempts(d).get(0);
        assertThat(after((java.time.Instant) b[0], (java.time.Instant) a[1])).isTrue();
        assertThat(after((java.time.Instant) c[0], (java.time.Instant) a[1])).isTrue();
        assertThat(after((java.time.Instant) dd[0], (java.time.Instant) b[1])).isTrue();
        assertThat(after((java.time.Instant) dd[0], (java.time.Instant) c[1])).isTrue();
        assertThat(read.get(d)).isEqualTo(Map.of("b", "{\"step\":\"b\"}", "c", "{\"step\":\"c\"}"));

        WorkflowRun done = all.get(1).workflows().find(run.id()).orElseThrow();
        assertThat(done.name()).isEqualTo("diamond");
        assertThat(done.steps()).allSatisfy(s -> assertThat(s.status()).isEqualTo(TaskStatus.SUCCEEDED));
        assertThat(done.step("d").orElseThrow().dependencies())
                .containsExactlyInAnyOrder(Dependency.on("b"), Dependency.on("c"));
        assertThat(done.step("a").orElseThrow().result()).isEqualTo("{\"step\":\"a\"}");
    }

    private static boolean after(java.time.Instant later, java.time.Instant earlier) {
        return !later.isBefore(earlier);
    }

    @Test
    void aFailedDependencyCancelsItsDependentsWithTheReasonAndARetryLetsThemGoOn() {
        AtomicBoolean broken = new AtomicBoolean(true);
        List<DbTasks> all = engines(s -> s.name().equals("a") && broken.get());
        DbTasks tasks = all.get(0);
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("fails")
                        .step("a", step("fails", "a"))
                        .step("b", step("fails", "b"), "a")
                        .step("c", step("fails", "c"), Dependency.on("a").runAnyway())
                        .step("d", step("fails", "d"), "b")
                        .build());
        awaitStatus(tasks, run.taskId("a"), TaskStatus.FAILED);
        awaitStatus(tasks, run.taskId("c"), TaskStatus.SUCCEEDED);
        var b = awaitStatus(tasks, run.taskId("b"), TaskStatus.CANCELLED);
        assertThat(b.lastError()).contains("'a'").contains("FAILED").contains("step a broke");
        var d = awaitStatus(tasks, run.taskId("d"), TaskStatus.CANCELLED);
        assertThat(d.lastError()).contains("'b'").contains("CANCELLED");
        assertThat(runs).doesNotContainKeys(run.taskId("b"), run.taskId("d"));

        broken.set(false);
        assertThat(tasks.workflows().retry(run.id())).isEqualTo(1);
        awaitStatus(tasks, run.taskId("d"), TaskStatus.SUCCEEDED);
        assertThat(tasks.find(run.taskId("b")).orElseThrow().status()).isEqualTo(TaskStatus.SUCCEEDED);
        assertThat(runs.get(run.taskId("a"))).isEqualTo(2);
        assertThat(runs.get(run.taskId("b"))).isEqualTo(1);
        assertThat(runs.get(run.taskId("c"))).isEqualTo(1);
        assertThat(runs.get(run.taskId("d"))).isEqualTo(1);
    }

    @Test
    void cancellingAWorkflowCancelsWhatHasNotStarted() {
        DbTasks tasks = producer();
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("cancel")
                        .step("a", step("cancel", "a"))
                        .step("b", step("cancel", "b"), "a")
                        .build());
        assertThat(tasks.workflows().cancel(run.id())).isEqualTo(2);
        assertThat(tasks.workflows().find(run.id()).orElseThrow().steps())
                .allSatisfy(s -> assertThat(s.status()).isEqualTo(TaskStatus.CANCELLED));

        // Retention removes the finished steps with their edges and then the workflow row.
        sql("UPDATE dbtasks_task SET finished_at = ?", java.time.Instant.now().minus(java.time.Duration.ofDays(400)));
        assertThat(tasks.sweepRetention()).isEqualTo(2);
        assertThat(tasks.workflows().find(run.id())).isEmpty();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_dependency")).isZero();
    }

    @Test
    void aWaitingStepIsNotClaimedAndAnOperatorCancelEndsItsDependents() {
        List<DbTasks> all = engines(s -> false);
        DbTasks tasks = all.get(0);
        // "a" is of a kind no engine runs, so "b" waits for it for as long as the test looks.
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("waits")
                        .step(
                                "a",
                                TaskRequest.builder("nobody-runs-this")
                                        .queue("wf")
                                        .build())
                        .step("b", step("waits", "b"), "a")
                        .step("c", step("waits", "c"), Dependency.on("a").runAnyway())
                        .build());
        assertStaysIn(tasks, run.taskId("b"), TaskStatus.WAITING, java.time.Duration.ofMillis(300));
        tasks.cancel(run.taskId("a"));
        assertThat(awaitStatus(tasks, run.taskId("b"), TaskStatus.CANCELLED).lastError())
                .contains("'a'")
                .contains("CANCELLED");
        awaitStatus(tasks, run.taskId("c"), TaskStatus.SUCCEEDED);
        assertThat(runs).doesNotContainKey(run.taskId("b"));
    }

    @Test
    void stepsAreStoredInTheirFirstStateAndQueueDepthsCountTheWaitingOnes() throws Exception {
        DbTasks tasks = producer();
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("depths")
                        .step("a", step("depths", "a"))
                        .step("b", step("depths", "b"), "a")
                        .step("c", step("depths", "c"), "a", "b")
                        .build());
        assertThat(run.steps())
                .extracting(s -> s.name() + "=" + s.status())
                .containsExactly("a=PENDING", "b=WAITING", "c=WAITING");
        // As stored: each row's state, workflow, name and count, with no later update (updated_at is
        // the insert's own time).
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT step, status, waiting_for, workflow_id,"
                        + " CASE WHEN updated_at = created_at THEN 1 ELSE 0 END FROM dbtasks_task ORDER BY id");
                ResultSet rs = ps.executeQuery()) {
            List<String> rows = new ArrayList<>();
            while (rs.next()) {
                rows.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getInt(3) + " "
                        + (rs.getLong(4) == run.id()) + " " + rs.getInt(5));
            }
            assertThat(rows).containsExactly("a PENDING 0 true 1", "b WAITING 1 true 1", "c WAITING 2 true 1");
        }
        io.dbtasks.QueueDepth wf = tasks.queueDepths().stream()
                .filter(d -> d.queue().equals("wf"))
                .findFirst()
                .orElseThrow();
        assertThat(wf.waiting()).isEqualTo(2);
        assertThat(wf.pending()).isEqualTo(1);
    }

    @Test
    void aWorkflowInsertedInATransactionThatRollsBackLeavesNothing() throws Exception {
        DbTasks tasks = producer();
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            WorkflowRun run = tasks.workflows()
                    .insert(
                            c,
                            Workflow.named("rolled back")
                                    .step("a", step("rb", "a"))
                                    .step("b", step("rb", "b"), "a")
                                    .build());
            assertThat(run.steps()).hasSize(2);
            c.rollback();
        }
        assertThat(count("SELECT COUNT(*) FROM dbtasks_workflow")).isZero();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isZero();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_dependency")).isZero();
    }

    @Test
    void manyRandomWorkflowsOnThreeEnginesRunEachStepOnceAfterItsDependencies() throws Exception {
        List<DbTasks> all = engines(s -> false);
        Random random = new Random(17);
        int workflows = 100;
        int stepsEach = 10;
        List<WorkflowRun> inserted = new ArrayList<>();
        for (int w = 0; w < workflows; w++) {
            Workflow.Builder b = Workflow.named("random " + w);
            for (int s = 0; s < stepsEach; s++) {
                List<String> deps = new ArrayList<>();
                for (int p = 0; p < s; p++) {
                    if (random.nextInt(s) < 2) {
                        deps.add("s" + p);
                    }
                }
                b.step("s" + s, step("random " + w, "s" + s), deps.toArray(new String[0]));
            }
            inserted.add(all.get(w % 3).workflows().insert(b.build()));
        }
        int total = workflows * stepsEach;
        eventually()
                .alias("every step to succeed")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'SUCCEEDED'") == total);

        // Each step one attempt, SUCCEEDED; each edge: the dependent started after its dependency's
        // attempt finished.
        Map<Long, Timestamp[]> times = new HashMap<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps =
                        c.prepareStatement("SELECT task_id, started_at, finished_at, outcome FROM dbtasks_attempt");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                assertThat(rs.getString(4)).isEqualTo("SUCCEEDED");
                Timestamp[] previous = times.put(rs.getLong(1), new Timestamp[] {
                    Timestamp.from(dialect().getInstant(rs, "started_at")),
                    Timestamp.from(dialect().getInstant(rs, "finished_at"))
                });
                assertThat(previous)
                        .as("a second attempt of task " + rs.getLong(1))
                        .isNull();
            }
        }
        assertThat(times).hasSize(total);
        assertThat(runs).hasSize(total);
        assertThat(Set.copyOf(runs.values())).containsExactly(1);
        int edges = 0;
        for (WorkflowRun run : inserted) {
            for (StepState s : run.steps()) {
                for (Dependency d : s.dependencies()) {
                    Timestamp[] dependent = times.get(s.taskId());
                    Timestamp[] dependency = times.get(run.taskId(d.step()));
                    assertThat(dependent[0])
                            .as(run.name() + ": " + s.name() + " started before " + d.step() + " finished")
                            .isAfterOrEqualTo(dependency[1]);
                    edges++;
                }
            }
        }
        assertThat(edges).isGreaterThan(total);
    }

    @Test
    void aStepThatAddsOneHundredStepsIsFollowedByAFanInThatRunsOnceAfterThemAll() throws Exception {
        int parts = 100;
        AtomicBoolean failFirstSplit = new AtomicBoolean(true);
        List<DbTasks> all = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            all.add(engine(b -> b.queue("wf", 2)
                    .handler("split", Void.class, (ctx, none) -> {
                        runs.merge(ctx.taskId(), 1, Integer::sum);
                        for (int p = 0; p < parts; p++) {
                            ctx.addStep("part-" + p, step("fan", "part-" + p), "merge");
                        }
                        if (failFirstSplit.getAndSet(false)) {
                            throw new IllegalStateException("the first attempt adds its steps and fails");
                        }
                    })
                    .handler("step", Step.class, (ctx, step) -> {
                        runs.merge(ctx.taskId(), 1, Integer::sum);
                        read.put(ctx.taskId(), ctx.dependencyResults());
                        ctx.setResult("\"" + step.name() + "\"");
                    })));
        }
        all.forEach(DbTasks::start);
        WorkflowRun run = all.get(0)
                .workflows()
                .insert(Workflow.named("fan")
                        .step(
                                "split",
                                TaskRequest.builder("split")
                                        .queue("wf")
                                        .retryPolicy(io.dbtasks.RetryPolicy.fixed(java.time.Duration.ofMillis(10)))
                                        .build())
                        .step("merge", step("fan", "merge"), "split")
                        .build());
        long merge = run.taskId("merge");
        awaitStatus(all.get(0), merge, TaskStatus.SUCCEEDED);

        WorkflowRun done = all.get(0).workflows().find(run.id()).orElseThrow();
        assertThat(done.steps()).hasSize(parts + 2);
        assertThat(done.steps()).allSatisfy(s -> assertThat(s.status()).isEqualTo(TaskStatus.SUCCEEDED));
        assertThat(done.step("merge").orElseThrow().dependencies()).hasSize(parts + 1);
        assertThat(runs.get(run.taskId("split"))).isEqualTo(2); // the failed attempt added nothing
        assertThat(runs.get(merge)).isEqualTo(1);
        assertThat(read.get(merge)).hasSize(parts + 1).containsEntry("part-7", "\"part-7\"");
        java.time.Instant mergeStarted = (java.time.Instant) attempts(merge).get(0)[0];
        for (StepState s : done.steps()) {
            if (s.name().startsWith("part-")) {
                assertThat(runs.get(s.taskId())).isEqualTo(1);
                List<Object[]> a = attempts(s.taskId());
                assertThat(a).hasSize(1);
                assertThat(after(mergeStarted, (java.time.Instant) a.get(0)[1])).isTrue();
            }
        }
    }

    @Test
    void aTransactionalStepStoresItsResultAndAddsItsStepsWithItsOwnCommit() {
        AtomicBoolean firstAttempt = new AtomicBoolean(true);
        DbTasks tasks = engine(b -> b.queue("wf", 2)
                .transactionalHandler("tx-step", Void.class, (ctx, tx, none) -> {
                    ctx.setResult("{\"from\":\"tx\"}");
                    ctx.addStep("extra", step("tx", "extra"), "end");
                    if (firstAttempt.getAndSet(false)) {
                        throw new IllegalStateException("the first attempt rolls back its result and step");
                    }
                })
                .handler("step", Step.class, (ctx, step) -> {
                    runs.merge(ctx.taskId(), 1, Integer::sum);
                    read.put(ctx.taskId(), ctx.dependencyResults());
                    ctx.setResult("\"" + step.name() + "\"");
                }));
        tasks.start();
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("tx")
                        .step(
                                "t",
                                TaskRequest.builder("tx-step")
                                        .queue("wf")
                                        .retryPolicy(io.dbtasks.RetryPolicy.fixed(java.time.Duration.ofMillis(10)))
                                        .build())
                        .step("end", step("tx", "end"), "t")
                        .build());
        long end = run.taskId("end");
        awaitStatus(tasks, end, TaskStatus.SUCCEEDED);
        assertThat(read.get(end)).isEqualTo(Map.of("t", "{\"from\":\"tx\"}", "extra", "\"extra\""));
        assertThat(runs.get(end)).isEqualTo(1);
        assertThat(tasks.workflows().find(run.id()).orElseThrow().steps()).hasSize(3);
    }

    /** One engine of two handlers on the queue "wf", for tests that follow one graph step by step. */
    private DbTasks oneEngine(java.util.function.Predicate<Step> fails, java.time.Duration unclaimableGrace) {
        DbTasks e = engine(b -> b.queue("wf", 2)
                .unclaimableGrace(unclaimableGrace)
                .handler("step", Step.class, (ctx, step) -> {
                    runs.merge(ctx.taskId(), 1, Integer::sum);
                    if (fails.test(step)) {
                        throw new NonRetryableException("step " + step.name() + " broke");
                    }
                }));
        e.start();
        return e;
    }

    private DbTasks oneEngine(java.util.function.Predicate<Step> fails) {
        return oneEngine(fails, java.time.Duration.ZERO);
    }

    private static TaskRequest nobodyRunsThis() {
        return TaskRequest.builder("nobody-runs-this").queue("wf").build();
    }

    @Test
    void aRunAnywayDependencyThatIsRetriedCountsOnceSoItsDependentStillWaitsForTheOthers() {
        AtomicBoolean broken = new AtomicBoolean(true);
        DbTasks tasks = oneEngine(s -> s.name().equals("x") && broken.get());
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("once")
                        .step("x", step("once", "x"))
                        .step("y", nobodyRunsThis())
                        .step("d", step("once", "d"), Dependency.on("x").runAnyway(), Dependency.on("y"))
                        .build());
        long d = run.taskId("d");
        awaitStatus(tasks, run.taskId("x"), TaskStatus.FAILED);
        assertThat(count("SELECT waiting_for FROM dbtasks_task WHERE id = ?", d))
                .isEqualTo(1);

        broken.set(false);
        tasks.retry(run.taskId("x"));
        awaitStatus(tasks, run.taskId("x"), TaskStatus.SUCCEEDED);
        // Its success counts once: "d" still waits for "y".
        assertThat(tasks.find(d).orElseThrow().status()).isEqualTo(TaskStatus.WAITING);
        assertThat(count("SELECT waiting_for FROM dbtasks_task WHERE id = ?", d))
                .isEqualTo(1);
        assertThat(runs).doesNotContainKey(d);
    }

    @Test
    void runNowOfAStepKeepsItsDependenciesAndRevivesWhatItsFailureCancelled() {
        AtomicBoolean broken = new AtomicBoolean(true);
        DbTasks tasks = oneEngine(s -> s.name().equals("a") && broken.get());
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("now")
                        .step("a", step("now", "a"))
                        .step("b", step("now", "b"), "a")
                        .step("c", step("now", "c"), "b")
                        .build());
        long b = run.taskId("b");
        awaitStatus(tasks, run.taskId("a"), TaskStatus.FAILED);
        awaitStatus(tasks, run.taskId("c"), TaskStatus.CANCELLED);

        // "b" was cancelled because "a" failed: run now makes it wait for "a" again, not run.
        assertThat(tasks.runNow(b).status()).isEqualTo(TaskStatus.WAITING);
        assertThat(tasks.find(run.taskId("c")).orElseThrow().status()).isEqualTo(TaskStatus.WAITING);
        assertThatThrownBy(() -> tasks.runNow(b))
                .isInstanceOf(io.dbtasks.IllegalTransitionException.class)
                .hasMessageContaining("WAITING")
                .hasMessageContaining("dependencies");

        // Run now of the failed "a" lets what it cancelled go on.
        broken.set(false);
        tasks.runNow(run.taskId("a"));
        awaitStatus(tasks, run.taskId("c"), TaskStatus.SUCCEEDED);
        assertThat(runs.get(b)).isEqualTo(1);
        assertThat(runs.get(run.taskId("a"))).isEqualTo(2);
    }

    @Test
    void theForeignTaskWatchFailingAStepEndsItsDependents() {
        DbTasks tasks = oneEngine(s -> false, java.time.Duration.ofMillis(300));
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("foreign")
                        .step("a", nobodyRunsThis())
                        .step("b", step("foreign", "b"), "a")
                        .step("c", step("foreign", "c"), Dependency.on("a").runAnyway())
                        .build());
        awaitStatus(tasks, run.taskId("a"), TaskStatus.FAILED);
        assertThat(awaitStatus(tasks, run.taskId("b"), TaskStatus.CANCELLED).lastError())
                .contains("'a'")
                .contains("FAILED");
        awaitStatus(tasks, run.taskId("c"), TaskStatus.SUCCEEDED);
    }

    @Test
    void deletingAnUnfinishedStepThatOthersWaitForIsRefused() {
        DbTasks tasks = producer();
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("delete")
                        .step("a", step("delete", "a"))
                        .step("b", step("delete", "b"), "a")
                        .build());
        long a = run.taskId("a");
        assertThatThrownBy(() -> tasks.delete(a))
                .isInstanceOf(io.dbtasks.IllegalTransitionException.class)
                .hasMessageContaining("'b'")
                .hasMessageContaining("cancel it");
        assertThat(tasks.find(a)).isPresent();

        tasks.cancel(a);
        assertThat(tasks.find(run.taskId("b")).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        tasks.delete(a);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_dependency")).isZero();
    }

    @Test
    void retryingOneOfTwoFailedDependenciesLeavesTheDependentCancelledByTheOther() {
        AtomicBoolean broken = new AtomicBoolean(true);
        DbTasks tasks = oneEngine(s -> !s.name().equals("c") && broken.get());
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("two")
                        .step("a", step("two", "a"))
                        .step("b", step("two", "b"))
                        .step("c", step("two", "c"), "a", "b")
                        .build());
        long c = run.taskId("c");
        awaitStatus(tasks, run.taskId("a"), TaskStatus.FAILED);
        awaitStatus(tasks, run.taskId("b"), TaskStatus.FAILED);
        awaitStatus(tasks, c, TaskStatus.CANCELLED);
        long blocker = count("SELECT blocked_by FROM dbtasks_task WHERE id = ?", c);
        long other = blocker == run.taskId("a") ? run.taskId("b") : run.taskId("a");

        broken.set(false);
        tasks.retry(blocker);
        assertThat(tasks.find(c).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(count("SELECT blocked_by FROM dbtasks_task WHERE id = ?", c)).isEqualTo(other);

        awaitStatus(tasks, blocker, TaskStatus.SUCCEEDED);
        tasks.retry(other);
        awaitStatus(tasks, c, TaskStatus.SUCCEEDED);
        assertThat(runs.get(c)).isEqualTo(1);
    }

    @Test
    void retentionDeletesAWorkflowOnlyWholeOnceEveryStepIsFinishedAndOld() {
        DbTasks tasks = producer();
        WorkflowRun run = tasks.workflows()
                .insert(Workflow.named("keep")
                        .step("a", step("keep", "a"))
                        .step("b", step("keep", "b"), "a")
                        .build());
        java.time.Instant old = java.time.Instant.now().minus(java.time.Duration.ofDays(400));
        // "a" finished long ago, "b" still waits for it: nothing of the workflow goes.
        sql("UPDATE dbtasks_task SET status = 'SUCCEEDED', finished_at = ? WHERE id = ?", old, run.taskId("a"));
        assertThat(tasks.sweepRetention()).isZero();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isEqualTo(2);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_dependency")).isEqualTo(1);

        // Every step finished, one of them recently: still nothing.
        tasks.cancel(run.taskId("b"));
        assertThat(tasks.sweepRetention()).isZero();

        sql("UPDATE dbtasks_task SET finished_at = ?", old);
        assertThat(tasks.sweepRetention()).isEqualTo(2);
        assertThat(tasks.workflows().find(run.id())).isEmpty();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_dependency")).isZero();
    }
}
