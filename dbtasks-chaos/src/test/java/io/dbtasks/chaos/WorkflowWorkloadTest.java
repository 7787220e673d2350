package io.dbtasks.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.chaos.ChaosRun.Fault;
import io.dbtasks.testing.TestDatabase;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The workflow workload ({@link ChaosRun#workflows}): {@code -Dchaos.workflows} workflows (the
 * build's default is a CI size, {@code run-chaos.sh} passes 1,000) of {@code -Dchaos.workflow.steps}
 * steps with random dependencies, worker processes killed with {@code kill -9} and paused past
 * their lease while they run. Every step must succeed exactly once, none may start before each of
 * its dependencies succeeded (attempt times by the database clock), and every transactional
 * effect must exist once. H2 is not run: an in-memory H2 lives in one JVM, and the workload's
 * engines are processes of their own.
 */
class WorkflowWorkloadTest {
    private static final int WORKFLOWS = Integer.getInteger("chaos.workflows", 150);
    private static final int STEPS = Integer.getInteger("chaos.workflow.steps", 10);
    private static final int WORKERS = Integer.getInteger("chaos.workers", 3);
    private static final int FAULTS = Integer.getInteger("chaos.workflow.faults", 1);

    @ParameterizedTest
    @EnumSource(
            value = TestDatabase.class,
            names = {"POSTGRESQL", "MARIADB"})
    void everyStepRunsOnceAfterItsDependenciesUnderKillsAndPauses(TestDatabase db) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        List<Fault> kinds = List.of(Fault.KILL9, Fault.STOP);
        Map<String, Long> r = new ChaosRun(
                        "workflows-" + db.name().toLowerCase(java.util.Locale.ROOT),
                        db.url(),
                        null,
                        0,
                        WORKERS,
                        FAULTS,
                        kinds)
                .workflows(WORKFLOWS, STEPS)
                .run(List.of());
        assertThat(r.get("acknowledged")).as("acknowledged: %s", r).isEqualTo(WORKFLOWS);
        assertThat(r.get("workflows")).as("workflows: %s", r).isEqualTo(WORKFLOWS);
        assertThat(r.get("steps")).as("steps: %s", r).isEqualTo((long) WORKFLOWS * STEPS);
        assertThat(r.get("edges")).as("the graphs have dependencies: %s", r).isPositive();
        for (String zero : List.of(
                "missingWorkflows",
                "duplicateWorkflows",
                "stepsShort",
                "stepsNotSucceeded",
                "startedEarly",
                "startedWithoutSucceededDependency",
                "txDuplicates",
                "txMissing",
                "txOrphans",
                "txTokenMismatch",
                "badSucceededAttempts",
                "repeatedTokens")) {
            assertThat(r.get(zero)).as("%s: %s", zero, r).isZero();
        }
        assertThat(r.get("rescues"))
                .as("the faults struck steps in flight (rescues): %s", r)
                .isPositive();
        for (Fault f : kinds) {
            assertThat(r.get("faults" + f)).as("faults of kind %s", f).isEqualTo(FAULTS);
        }
        ChaosTest.report("workflows " + db, r);
    }
}
