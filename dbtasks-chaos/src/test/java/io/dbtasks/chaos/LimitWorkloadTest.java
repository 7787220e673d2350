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
 * The limits workload ({@link ChaosRun#limitKeys}): engine processes on one database run
 * transactional tasks over a few concurrency keys limited to 1 RUNNING at once, while a holder is
 * killed with {@code kill -9}, a holder is paused ({@code SIGSTOP}) past its lease and resumed, and
 * the database terminates every connection. No two committed effects of a key may overlap, nor two
 * RUNNING intervals of a key (a task whose lease expired counts until its rescue), and every task
 * must succeed once with one effect ({@link ChaosTest#assertClean}).
 *
 * <p>Sizes: {@code -Dchaos.limits.tasks}, {@code -Dchaos.limits.keys}, {@code
 * -Dchaos.limits.workers}, {@code -Dchaos.limits.faults} (per kind); the build's are a CI size,
 * {@code run-chaos.sh} passes the full one. Not on H2: the chaos workers are processes of their own,
 * and H2 here is an in-process database.
 */
class LimitWorkloadTest {
    private static final int TASKS = Integer.getInteger("chaos.limits.tasks", 800);
    private static final int KEYS = Integer.getInteger("chaos.limits.keys", 12);
    private static final int WORKERS = Integer.getInteger("chaos.limits.workers", 3);
    private static final int FAULTS = Integer.getInteger("chaos.limits.faults", 1);

    @ParameterizedTest
    @EnumSource(
            value = TestDatabase.class,
            names = {"POSTGRESQL", "MARIADB"})
    void aLimitOfOneHoldsInEffectsUnderKillsPausesPastTheLeaseAndBackendKills(TestDatabase db) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        List<Fault> kinds = List.of(Fault.KILL9, Fault.STOP, Fault.TERMINATE);
        Map<String, Long> r = new ChaosRun(
                        "limits-" + db.name().toLowerCase(java.util.Locale.ROOT),
                        db.url(),
                        null,
                        TASKS,
                        WORKERS,
                        FAULTS,
                        kinds)
                .limitKeys(KEYS)
                .run(List.of());
        ChaosTest.assertClean(r, kinds, TASKS, FAULTS);
        assertThat(r.get("effectOverlaps"))
                .as("committed effects of a limit-1 key that overlap: %s", r)
                .isZero();
        assertThat(r.get("runningOverlaps"))
                .as("RUNNING intervals of a limit-1 key that overlap: %s", r)
                .isZero();
        assertThat(r.get("effects")).as("effects: %s", r).isEqualTo(TASKS);
        assertThat(r.get("keys")).as("keys: %s", r).isEqualTo(Math.min(KEYS, TASKS));
        ChaosTest.report("limits " + db, r);
    }
}
