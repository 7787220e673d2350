package io.dbtasks.internal;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.DbTasksException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** A migration Flyway refuses stops {@code build()}: no engine runs on a schema it could not check. */
class MigrationFailureTest {
    @Test
    void aFlywayValidationErrorStopsStartup() throws SQLException {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:dbtasks_migration_failure;DB_CLOSE_DELAY=-1");
        DbTasks.builder(ds).workers(false).build().close();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            // As if someone edited an applied migration: its checksum no longer matches.
            s.executeUpdate(
                    "UPDATE \"dbtasks_schema_history\" SET \"checksum\" = \"checksum\" + 1 WHERE \"version\" = '1'");
        }
        assertThatThrownBy(() -> DbTasks.builder(ds).workers(false).build())
                .isInstanceOf(DbTasksException.class)
                .hasMessageContaining("Migrating the dbtasks schema (h2) failed")
                .hasMessageContaining("checksum");
    }
}
