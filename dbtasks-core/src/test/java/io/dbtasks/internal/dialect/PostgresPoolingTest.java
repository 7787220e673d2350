package io.dbtasks.internal.dialect;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import javax.sql.DataSource;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

/** Pooler detection on a direct connection, and switching to unnamed statements on a later finding. */
class PostgresPoolingTest {
    @BeforeEach
    void postgres() {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "PostgreSQL is not in dbtasks.test.databases");
    }

    @Test
    void directConnectionIsNotTakenForAPooler() throws Exception {
        try (HikariDataSource pool = TestDatabase.POSTGRESQL.newPool(4);
                Connection c = pool.getConnection()) {
            assertThat(PostgresPooling.detect(pool, c)).isEmpty();
        }
    }

    @Test
    void laterFindingSwitchesEveryConnectionToUnnamedStatements() throws Exception {
        try (HikariDataSource pool = TestDatabase.POSTGRESQL.newPool(2)) {
            DataSource engine = PostgresPooling.switchable(pool, false);
            try (Connection c = engine.getConnection()) {
                assertThat(c.unwrap(PGConnection.class).getPrepareThreshold()).isPositive();
            }
            assertThat(PostgresPooling.suspect(engine, "a test finding")).isTrue();
            assertThat(PostgresPooling.suspect(engine, "a test finding")).isFalse();
            try (Connection c = engine.getConnection()) {
                assertThat(c.unwrap(PGConnection.class).getPrepareThreshold()).isZero();
            }
            assertThat(PostgresPooling.suspect(pool, "not a switchable DataSource"))
                    .isFalse();
        }
    }
}
