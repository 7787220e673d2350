package io.dbtasks.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.testing.TestDatabase;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The lock workload ({@link LockRun}): two processes of four threads, fenced increments, one
 * process paused past the lease every few seconds. The counter must equal the accepted increments,
 * the tokens must strictly increase in commit order, and every {@code withLock} whose lease was taken
 * over must have reported it.
 */
class LockWorkloadTest {
    private static final int SECONDS = Integer.getInteger("chaos.lock.seconds", 30);

    @ParameterizedTest
    @EnumSource(
            value = TestDatabase.class,
            names = {"POSTGRESQL", "MARIADB"})
    void fencedIncrementsUnderPausesPastTheLease(TestDatabase db) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        Map<String, Long> r = LockRun.run(db.url(), SECONDS);
        assertThat(r.get("pauses")).as("pauses").isPositive();
        assertThat(r.get("counter")).as("counter = accepted increments: %s", r).isEqualTo(r.get("accepted"));
        assertThat(r.get("history")).as("history rows: %s", r).isEqualTo(r.get("accepted"));
        assertThat(r.get("acceptedLogged")).as("logged accepted: %s", r).isEqualTo(r.get("accepted"));
        assertThat(r.get("orderBreaks")).as("tokens out of commit order: %s", r).isZero();
        assertThat(r.get("takeovers")).as("takeovers happened: %s", r).isPositive();
        assertThat(r.get("unreported"))
                .as("takeovers withLock did not report: %s", r)
                .isZero();
        ChaosTest.report("locks " + db, r);
    }
}
