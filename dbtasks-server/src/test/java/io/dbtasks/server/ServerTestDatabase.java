package io.dbtasks.server;

import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The database a server test runs on: a sibling of {@link TestDatabase}'s, named {@code
 * dbtasks_server_test} (or {@code -Ddbtasks.test.server.database=...}, for builds that share a server), on
 * the same server with the same credentials. The core tests empty {@code dbtasks_test} before each of
 * their tests, so a server test sharing it would lose its tasks whenever both run at once (two
 * builds on one machine). If the sibling cannot be created (no privilege), or
 * {@code -Ddbtasks.test.server-sibling=false} says so, the shared database is used.
 */
final class ServerTestDatabase {
    static final String NAME = System.getProperty("dbtasks.test.server.database", "dbtasks_server_test");

    private static final Logger log = LoggerFactory.getLogger(ServerTestDatabase.class);

    private ServerTestDatabase() {}

    /**
     * Skips the test class unless {@code db} is required, makes sure the sibling database exists and
     * empties its dbtasks tables.
     *
     * @param db PostgreSQL or MariaDB
     * @return the JDBC URL the server should use
     */
    static String prepare(TestDatabase db) {
        Assumptions.assumeTrue(db.required(), db + " is not in dbtasks.test.databases");
        String shared = db.url();
        if (!Boolean.parseBoolean(System.getProperty("dbtasks.test.server-sibling", "true"))) {
            // Told to stay in the given database (a shared machine where each build has one database).
            db.clear();
            return shared;
        }
        String sibling = siblingUrl(shared, NAME);
        try {
            create(db, shared);
        } catch (SQLException e) {
            log.warn("Cannot create {} next to {} ({}); using the shared test database", NAME, shared, e.getMessage());
            db.clear();
            return shared;
        }
        clear(sibling);
        return sibling;
    }

    /** The same URL with another database name: {@code jdbc:x://host:port/NAME?params}. */
    static String siblingUrl(String url, String database) {
        int q = url.indexOf('?');
        String base = q < 0 ? url : url.substring(0, q);
        String params = q < 0 ? "" : url.substring(q);
        return base.substring(0, base.lastIndexOf('/') + 1) + database + params;
    }

    private static void create(TestDatabase db, String sharedUrl) throws SQLException {
        try (Connection c = DriverManager.getConnection(sharedUrl);
                Statement s = c.createStatement()) {
            if (db == TestDatabase.MARIADB) {
                s.executeUpdate("CREATE DATABASE IF NOT EXISTS " + NAME);
                return;
            }
            try (ResultSet rs = s.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + NAME + "'")) {
                if (rs.next()) {
                    return;
                }
            }
            try {
                s.executeUpdate("CREATE DATABASE " + NAME);
            } catch (SQLException e) {
                if (!"42P04".equals(e.getSQLState())) { // duplicate_database: a parallel build created it
                    throw e;
                }
            }
        }
    }

    private static void clear(String url) {
        try (Connection c = DriverManager.getConnection(url);
                Statement s = c.createStatement()) {
            for (String table : List.of(
                    "dbtasks_attempt",
                    "dbtasks_task",
                    "dbtasks_task_key",
                    "dbtasks_job",
                    "dbtasks_job_run",
                    "dbtasks_batch",
                    "dbtasks_batch_chunk",
                    "demo_order")) {
                try {
                    s.executeUpdate("DELETE FROM " + table);
                } catch (SQLException e) {
                    // not migrated yet: the server's first start creates the tables
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot reach " + url + ": " + e.getMessage(), e);
        }
    }
}
