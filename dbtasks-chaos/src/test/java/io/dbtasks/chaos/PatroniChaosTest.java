package io.dbtasks.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.testing.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class PatroniChaosTest {
    @Test
    void clusterComesUpAndGoesAway() throws Exception {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "postgresql is not in dbtasks.test.databases");
        PatroniCluster.unavailable().ifPresent(Assumptions::abort);
        PatroniCluster cluster = PatroniCluster.start(2, "chaos", true);
        try {
            System.out.println("leader " + cluster.leader() + " url " + cluster.multiHostUrl("chaos"));
            cluster.synchronousMode(false);
            cluster.synchronousMode(true);
        } finally {
            cluster.close();
        }
        assertThat(cluster.ownProcesses()).isEmpty();
    }
}
