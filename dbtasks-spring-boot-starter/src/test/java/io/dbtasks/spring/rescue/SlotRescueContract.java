package io.dbtasks.spring.rescue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.testing.SecondProcess;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Three instances of {@link SlotApp} (two contexts here, one in a second JVM) share one database;
 * the second JVM's run of a slot is killed with SIGKILL mid-run. The slot's guard row is left
 * RUNNING, and no instance will ever call that slot's key again: a live instance must run it once
 * its lease has ended. Run once per database by the subclasses.
 */
public abstract class SlotRescueContract {
    private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();
    private SecondProcess child;

    protected abstract TestDatabase database();

    @AfterEach
    void stop() {
        if (child != null) {
            child.close();
        }
        contexts.forEach(ConfigurableApplicationContext::close);
    }

    @Test
    void slotWhoseRunnerWasKilledMidRunCompletesExactlyOnceAfterTheLease() throws Exception {
        TestDatabase db = database();
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        DbTasks.builder(db.dataSource()).workers(false).build().close(); // migrate
        db.clear();
        SlotApp.COMPLETED.clear();
        String url = db.crossProcessUrl();
        child = SecondProcess.start(SlotApp.class, url, "instance-killed");
        contexts.add(SlotApp.start(url, "instance-a"));
        contexts.add(SlotApp.start(url, "instance-b"));

        String running = child.awaitOutput("RUNNING ", Duration.ofSeconds(90));
        String key = running.substring("RUNNING ".length()).trim();
        child.kill();
        assertThat(guard(key, "status")).isEqualTo("RUNNING");

        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .alias("the killed slot " + key + " is run by a live instance")
                .until(() -> SlotApp.COMPLETED.containsKey(key));
        Thread.sleep(3_000); // a second rescue, by the other instance, would show by now
        assertThat(SlotApp.COMPLETED.get(key)).as("runs of the killed slot").hasValue(1);
        assertThat(guard(key, "status")).isEqualTo("SUCCEEDED");
        assertThat(guard(key, "runs")).isEqualTo("2");
        for (Map.Entry<String, AtomicInteger> e : SlotApp.COMPLETED.entrySet()) {
            assertThat(e.getValue()).as("completed runs of %s", e.getKey()).hasValue(1);
        }
        assertThat(SlotApp.COMPLETED).hasSizeGreaterThan(3); // the other slots ran too
    }

    private String guard(String key, String column) throws Exception {
        try (Connection c = database().dataSource().getConnection();
                PreparedStatement ps =
                        c.prepareStatement("SELECT " + column + " FROM dbtasks_once WHERE once_key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }
}
