package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.ForeignTasks;
import io.dbtasks.Task;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.WorkerInfo;
import io.dbtasks.job.JobMethodRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Tasks an engine does not claim: visible as foreign, left to an engine that can run them, and
 * failed with the reason only when no live engine of the queue can run them for the grace period.
 */
public abstract class ForeignTasksContract extends EngineHarness {
    /** A job target. Public, as job targets must be. */
    public static final class Service {
        public void work(String s) {}
    }

    private DbTasks engineWith(String workerId, Duration grace, String... kinds) {
        return engine(b -> {
            b.workerId(workerId).queue("default", 4).unclaimableGrace(grace);
            for (String kind : kinds) {
                b.handler(kind, Void.class, (ctx, p) -> {});
            }
        });
    }

    private static long enqueue(DbTasks producer, String kind) {
        return producer.enqueue(TaskRequest.builder(kind).build()).task().id();
    }

    @Test
    void aKindNoLiveEngineHasWaitsForTheGraceThenEndsFailedWithTheReason() {
        DbTasks only = engineWith("only", Duration.ofSeconds(2), "known.kind");
        DbTasks producer = producer();
        long id = enqueue(producer, "nobody.has");
        only.start();
        eventually().until(() -> !only.foreignTasks().isEmpty());
        ForeignTasks f = only.foreignTasks().get(0);
        assertThat(f.queue()).isEqualTo("default");
        assertThat(f.kind()).isEqualTo("nobody.has");
        assertThat(f.jobTarget()).isNull();
        assertThat(f.tasks()).isEqualTo(1);
        assertThat(f.runnableElsewhere()).isFalse();
        Task waiting = producer.find(id).orElseThrow();
        assertThat(waiting.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(waiting.attempt()).isZero();

        Task failed = awaitStatus(producer, id, TaskStatus.FAILED);
        assertThat(failed.lastError())
                .contains("No live engine of queue 'default' can run kind 'nobody.has'")
                .contains("[only]")
                .contains("Register a handler for 'nobody.has'");
        assertThat(failed.attempt()).isZero();
        assertThat(producer.attempts(id)).isEmpty();
    }

    @Test
    void aRollingDeployThatBringsANewKindToOneEngineFirstLosesNothing() throws Exception {
        // The old engine alone for most of its grace, then a new one with the kind: every task runs
        // there; and while the new engine lives, the old one never fails the kind however long.
        DbTasks old = engineWith("old", Duration.ofMillis(1500), "old.kind");
        DbTasks producer = producer();
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ids.add(enqueue(producer, "new.kind"));
        }
        old.start();
        Thread.sleep(700);
        DbTasks fresh = engineWith("new", Duration.ofMillis(1500), "old.kind", "new.kind");
        producer.pauseQueue("default", "test"); // the new engine is live but runs nothing yet
        fresh.start();
        Thread.sleep(3000); // twice the grace: the old engine sees the kind runnable by "new"
        eventually()
                .until(() -> old.foreignTasks().stream()
                        .anyMatch(f -> f.kind().equals("new.kind") && f.runnableElsewhere()));
        for (long id : ids) {
            assertThat(producer.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        }
        producer.resumeQueue("default");
        for (long id : ids) {
            awaitStatus(producer, id, TaskStatus.SUCCEEDED);
            assertThat(producer.attempts(id)).hasSize(1);
            assertThat(producer.attempts(id).get(0).worker()).isEqualTo("new");
        }
    }

    @Test
    void workerRowsAdvertiseTheirKindsAndJobTargets() throws Exception {
        Service service = new Service();
        DbTasks jobs = engine(b -> b.workerId("jobs")
                .queue("default", 2)
                .handler("plain.kind", Void.class, (ctx, p) -> {})
                .jobTargets(new JobMethodRegistry().register("service", service, "work", String.class)));
        jobs.start();
        DbTasks plain = engineWith("plain", Duration.ofMinutes(1), "plain.kind");
        plain.start();
        List<WorkerInfo> workers = jobs.workers();
        WorkerInfo j = workers.stream()
                .filter(w -> w.workerId().equals("jobs"))
                .findFirst()
                .orElseThrow();
        assertThat(j.kinds()).contains("plain.kind", "dbtasks.job");
        assertThat(j.jobTargets()).isEqualTo(Set.of("service.work(java.lang.String)"));
        WorkerInfo p = workers.stream()
                .filter(w -> w.workerId().equals("plain"))
                .findFirst()
                .orElseThrow();
        assertThat(p.kinds()).isEqualTo(Set.of("plain.kind"));
        assertThat(p.jobTargets()).isNull();
    }
}
