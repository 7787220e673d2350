package io.dbtasks.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class GaleraChaosTest {
    private static GaleraCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        var reason = GaleraCluster.unavailable();
        Assumptions.assumeTrue(reason.isEmpty(), () -> reason.get());
        cluster = GaleraCluster.start(3, "chaos");
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void schemaMigratesWithATokenSequenceEveryNodeMayDrawFrom() throws Exception {
        try (HikariDataSource ds = ChaosRun.pool(cluster.url(1, "chaos"), 2)) {
            DbTasks.builder(ds).workers(false).build().close();
        }
        long last = 0;
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < cluster.size(); i++) {
                try (HikariDataSource ds = ChaosRun.pool(cluster.url(i, "chaos"), 1);
                        Connection c = ds.getConnection();
                        Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT NEXTVAL(dbtasks_token_seq)")) {
                    rs.next();
                    assertThat(rs.getLong(1)).as("token drawn on node %s", i).isGreaterThan(last);
                    last = rs.getLong(1);
                }
            }
        }
        // a second engine finds the schema migrated (Flyway's baseline at the first version)
        try (HikariDataSource ds = ChaosRun.pool(cluster.url(2, "chaos"), 2)) {
            DbTasks.builder(ds).workers(false).build().close();
        }
    }
}
