package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.Attempt;
import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.Task;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.job.JobDefinition;
import io.dbtasks.job.JobMethodRegistry;
import io.dbtasks.job.JobTarget;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Engines with different handlers and job targets sharing one database: each claims only what it
 * can run, so a task waits, untouched, for the engine that has its kind or allow-lists its target,
 * and ends SUCCEEDED there; none is failed by an engine that lacks its handler.
 */
public abstract class ClaimableWorkContract extends EngineHarness {
    private static final String SHARED = "shared.work";
    private static final String APP_ONLY = "app.only";

    /** A job target service: records the calls. Public, as job targets must be. */
    public static final class OrderService {
        final List<String> calls = new CopyOnWriteArrayList<>();

        public void createOrder(String id) {
            calls.add("createOrder " + id);
        }

        public void audit(String id) {
            calls.add("audit " + id);
        }
    }

    private final Map<Long, String> ranOn = new ConcurrentHashMap<>();

    private DbTasks engineWith(String workerId, List<String> kinds) {
        return engine(b -> {
            b.workerId(workerId).queue("default", 4);
            for (String kind : kinds) {
                b.handler(kind, Void.class, (ctx, p) -> ranOn.merge(ctx.taskId(), workerId, (a, c) -> a + "," + c));
            }
        });
    }

    private static List<Long> enqueue(DbTasks producer, String kind, int n) {
        List<TaskRequest> requests = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            requests.add(TaskRequest.builder(kind).build());
        }
        return producer.enqueueAll(requests).stream()
                .map(EnqueueResult::task)
                .map(Task::id)
                .toList();
    }

    @Test
    void anEngineWithoutAKindLeavesItsTasksToTheEngineThatHasItAndNoneFails() throws Exception {
        DbTasks lacking = engineWith("lacking", List.of(SHARED));
        DbTasks full = engineWith("full", List.of(SHARED, APP_ONLY));
        DbTasks producer = producer();
        List<Long> appOnly = enqueue(producer, APP_ONLY, 60);
        List<Long> shared = enqueue(producer, SHARED, 20);
        lacking.start();
        // The engine without the kind goes first, alone: it must leave the app-only tasks alone.
        eventually()
                .until(() -> shared.stream()
                        .allMatch(id -> producer.find(id).orElseThrow().status() == TaskStatus.SUCCEEDED));
        Thread.sleep(300);
        for (long id : appOnly) {
            Task t = producer.find(id).orElseThrow();
            assertThat(t.status()).as("task " + id + ": " + t.lastError()).isEqualTo(TaskStatus.PENDING);
            assertThat(t.attempt()).as("no attempt used on task " + id).isZero();
        }
        full.start();
        for (long id : appOnly) {
            awaitStatus(producer, id, TaskStatus.SUCCEEDED);
            List<Attempt> attempts = producer.attempts(id);
            assertThat(attempts).as("task " + id).hasSize(1);
            assertThat(attempts.get(0).worker()).isEqualTo("full");
            assertThat(ranOn.get(id)).isEqualTo("full");
        }
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'FAILED'"))
                .isZero();
    }

    @Test
    void jobRunsWaitForTheEngineThatAllowListsTheirTargetAndNoneFails() throws Exception {
        OrderService adminSide = new OrderService();
        OrderService appSide = new OrderService();
        // Another application's engine (an admin server) allow-lists only audit; the application's
        // own engine allow-lists createOrder.
        DbTasks admin = engine(b -> b.workerId("admin")
                .queue("default", 4)
                .jobTargets(new JobMethodRegistry().register("orderService", adminSide, "audit", String.class)));
        DbTasks app = engine(b -> b.workerId("app")
                .queue("default", 4)
                .jobTargets(new JobMethodRegistry()
                        .register("orderService", appSide, "createOrder", String.class)
                        .register("orderService", appSide, "audit", String.class)));
        DbTasks producer = producer();
        for (int i = 0; i < 30; i++) {
            producer.jobs()
                    .create(JobDefinition.builder("order-" + i)
                            .business("order", String.valueOf(i))
                            .target(JobTarget.of("orderService", "createOrder", "java.lang.String"))
                            .arguments("[\"" + i + "\"]")
                            .build());
        }
        producer.jobs()
                .create(JobDefinition.builder("audit-1")
                        .business("order", "audit")
                        .target(JobTarget.of("orderService", "audit", "java.lang.String"))
                        .arguments("[\"a\"]")
                        .build());
        admin.start();
        assertThat(producer.jobs().runBusinessType("order").enqueued()).isEqualTo(31);
        eventually().until(() -> producer.jobs().find("audit-1").orElseThrow().lastStatus() == TaskStatus.SUCCEEDED);
        Thread.sleep(300);
        for (int i = 0; i < 30; i++) {
            var job = producer.jobs().find("order-" + i).orElseThrow();
            assertThat(job.lastStatus())
                    .as(job.definition().code() + ": " + job.lastError())
                    .isEqualTo(TaskStatus.PENDING);
        }
        app.start();
        for (int i = 0; i < 30; i++) {
            String code = "order-" + i;
            eventually().until(() -> producer.jobs().find(code).orElseThrow().lastStatus() == TaskStatus.SUCCEEDED);
            long task = producer.jobs().find(code).orElseThrow().lastTaskId();
            assertThat(producer.attempts(task)).hasSize(1);
            assertThat(producer.attempts(task).get(0).worker()).isEqualTo("app");
        }
        assertThat(appSide.calls).hasSize(30);
        assertThat(adminSide.calls).containsExactly("audit a");
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'FAILED'"))
                .isZero();
    }
}
