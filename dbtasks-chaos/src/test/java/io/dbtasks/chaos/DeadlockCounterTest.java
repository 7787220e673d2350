package io.dbtasks.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The chaos report's deadlock count sees a deadlock the database detected, so its zeros mean none. */
class DeadlockCounterTest {
    @ParameterizedTest
    @EnumSource(
            value = TestDatabase.class,
            names = {"POSTGRESQL", "MARIADB"})
    void countsADeadlockTheDatabaseDetected(TestDatabase db) throws Exception {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        String url = db.url();
        try (Connection setup = DriverManager.getConnection(url);
                Statement s = setup.createStatement()) {
            s.execute("DROP TABLE IF EXISTS chaos_deadlock_probe");
            s.execute("CREATE TABLE chaos_deadlock_probe (id INT PRIMARY KEY, n INT NOT NULL)");
            s.execute("INSERT INTO chaos_deadlock_probe VALUES (1, 0), (2, 0)");
        }
        try (DeadlockCounter counter = new DeadlockCounter(url, "deadlock-probe");
                Connection a = DriverManager.getConnection(url);
                Connection b = DriverManager.getConnection(url)) {
            assertThat(counter.available())
                    .as("the database has a deadlock counter")
                    .isTrue();
            long before = counter.sample();
            a.setAutoCommit(false);
            b.setAutoCommit(false);
            update(a, 1);
            update(b, 2);
            CompletableFuture<Void> first = CompletableFuture.runAsync(() -> update(a, 2)); // waits for b
            Thread.sleep(300);
            CompletableFuture<Void> second = CompletableFuture.runAsync(() -> update(b, 1)); // closes the cycle
            int victims = 0;
            for (CompletableFuture<Void> f : List.of(first, second)) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    victims++;
                }
            }
            a.rollback();
            b.rollback();
            a.setAutoCommit(true);
            b.setAutoCommit(true);
            assertThat(victims).as("deadlock victims").isEqualTo(1);
            await().atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(250))
                    .untilAsserted(() -> assertThat(counter.sample() - before)
                            .as("deadlocks counted")
                            .isPositive());
        } finally {
            try (Connection c = DriverManager.getConnection(url);
                    Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS chaos_deadlock_probe");
            }
        }
    }

    private static void update(Connection c, int id) {
        try (Statement s = c.createStatement()) {
            s.executeUpdate("UPDATE chaos_deadlock_probe SET n = n + 1 WHERE id = " + id);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
