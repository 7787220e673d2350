package io.dbtasks.internal.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasksException;
import io.dbtasks.testing.TestDatabase;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A statement the database cancels at the time limit its caller set (a search with a timeout) is the
 * caller's answer, not a sign that the database is failing: the engine's health stays as it was, and
 * the error says what to do.
 */
class OwnTimeLimitTest {
    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void aStatementCancelledAtItsOwnLimitLeavesHealthAlone(TestDatabase db) {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        HealthTracker health = new HealthTracker();
        Jdbc jdbc = new Jdbc(db.dataSource(), Duration.ofSeconds(30), health);
        String slow = switch (db) {
            case POSTGRESQL -> "SELECT pg_sleep(10)";
            case MARIADB ->
                "SELECT COUNT(*) FROM information_schema.COLUMNS a, information_schema.COLUMNS b,"
                        + " information_schema.COLUMNS c";
            case H2 -> "SELECT SUM(X) FROM SYSTEM_RANGE(1, 100000000000)";
        };

        assertThatThrownBy(() -> jdbc.withConnection("Search tasks", Duration.ofSeconds(1), c -> {
                    try (Statement s = c.createStatement()) {
                        s.setQueryTimeout(1);
                        s.execute(slow);
                    }
                    return null;
                }))
                .isInstanceOf(DbTasksException.class)
                .hasMessageContaining("time limit");
        assertThat(health.snapshot().consecutiveFailures()).isZero();
        assertThat(health.snapshot().lastFailure()).isNull();
    }
}
