package io.dbtasks.internal.dialect;

import io.dbtasks.DbTasksException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MariaDB schema on a Galera cluster ({@code wsrep_on}). Galera does not certify sequence draws:
 * transactions on different nodes drawing from one sequence get the same values (a NOCACHE sequence
 * included), and a cached sequence it refuses outright unless {@code INCREMENT BY 0}, which takes each
 * node's {@code auto_increment_offset} and interleaves out of order. Fencing tokens on Galera
 * therefore come from {@value #NEXT_TOKEN}, a function that increments the one row of {@code
 * dbtasks_token_counter} in the caller's transaction: Galera certifies that update like any row's,
 * so of two concurrent draws on two nodes one commits and the other is rolled back (1213, retried
 * as a deadlock victim), and tokens are unique and increase in commit order across the cluster.
 *
 * <p>The first migration creates the sequence with the default cache, which a Galera node rejects.
 * Migrations are append-only (databases check their checksums), so on a fresh Galera schema {@link
 * #prepare} runs that first script itself with a {@code NOCACHE} sequence and Flyway baselines after
 * it. {@link #settle} creates the function (a stored function needs the {@code CREATE ROUTINE}
 * privilege, and with binary logging on {@code log_bin_trust_function_creators} or {@code SUPER}),
 * {@code SQL SECURITY INVOKER}: it runs with its caller's privileges (UPDATE on the counter, which
 * every engine's user has), never with those of the user who migrated, and keeps working when that
 * user is dropped; and it lifts the counter above every value the sequence handed out (a schema migrated before its
 * database joined a cluster). Not safe against a concurrent migration of the same schema (nor is
 * Flyway on Galera, whose lock is per node): migrate from one process.
 */
public final class GaleraSchema {
    private static final Logger log = LoggerFactory.getLogger(GaleraSchema.class);
    private static final String FIRST_SCRIPT = "io/dbtasks/migration/mariadb/V1__tasks.sql";
    private static final String SEQUENCE = "CREATE SEQUENCE dbtasks_token_seq";
    /** The token expression on Galera. */
    static final String NEXT_TOKEN = "dbtasks_next_token()";

    private GaleraSchema() {}

    /**
     * @param c a connection to a MariaDB server
     * @return whether it is a Galera node with replication on ({@code @@wsrep_on})
     * @throws SQLException if the query fails
     */
    public static boolean galera(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT @@wsrep_on")) {
            return rs.next() && rs.getInt(1) == 1;
        } catch (SQLException e) {
            if (e.getErrorCode() == 1193) { // unknown system variable: a server built without wsrep
                return false;
            }
            throw e;
        }
    }

    /**
     * On a Galera node whose schema has neither dbtasks' history nor its token sequence, runs the
     * first migration with a {@code NOCACHE} sequence.
     *
     * @param dataSource the database
     * @return whether it ran the first migration, so that Flyway must baseline at version 1
     * @throws SQLException if a query or a statement of the script fails
     */
    public static boolean prepare(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            if (!galera(c) || exists(c, "dbtasks_schema_history") || exists(c, "dbtasks_token_seq")) {
                return false;
            }
            log.info("Galera cluster: creating the first dbtasks schema version with a NOCACHE token sequence");
            try (Statement s = c.createStatement()) {
                for (String statement : firstScript()) {
                    s.execute(statement);
                }
            }
            return true;
        }
    }

    /**
     * On a Galera node, creates {@value #NEXT_TOKEN} if it is missing and lifts the token counter
     * above every value the sequence may have handed out.
     *
     * @param dataSource the database, migrated
     * @throws SQLException if a statement fails (the function needs the privileges the class
     *     comment names)
     */
    public static void settle(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            if (!galera(c)) {
                return;
            }
            try (Statement s = c.createStatement()) {
                s.executeUpdate("UPDATE dbtasks_token_counter SET last_token = GREATEST(last_token,"
                        + " (SELECT next_not_cached_value FROM dbtasks_token_seq)) WHERE id = 1");
                String security = routineSecurity(c);
                if (security == null) {
                    log.info("Galera cluster: creating {} for fencing tokens", NEXT_TOKEN);
                    s.execute("CREATE FUNCTION IF NOT EXISTS dbtasks_next_token() RETURNS BIGINT"
                            + " NOT DETERMINISTIC MODIFIES SQL DATA SQL SECURITY INVOKER BEGIN"
                            + " UPDATE dbtasks_token_counter SET last_token = LAST_INSERT_ID(last_token + 1) WHERE id = 1;"
                            + " RETURN LAST_INSERT_ID(); END");
                } else if (!"INVOKER".equalsIgnoreCase(security)) {
                    // created by an earlier version with the default, DEFINER
                    log.info("Galera cluster: {} now runs with its caller's privileges", NEXT_TOKEN);
                    s.execute("ALTER FUNCTION dbtasks_next_token SQL SECURITY INVOKER");
                }
            }
        }
    }

    /**
     * For an engine that does not migrate: checks that {@value #NEXT_TOKEN} exists, once this node
     * has applied every transaction committed on the cluster before the check.
     *
     * @param dataSource a Galera node
     * @throws DbTasksException if it is missing or the check fails, saying how to create it
     */
    public static void requireTokenFunction(DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            // This node may not have applied the migrating node's CREATE FUNCTION yet: wait until it
            // has applied everything committed before the check (wsrep_sync_wait), then restore.
            long previous;
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT @@SESSION.wsrep_sync_wait")) {
                rs.next();
                previous = rs.getLong(1);
            }
            boolean exists;
            try (Statement s = c.createStatement()) {
                s.execute("SET SESSION wsrep_sync_wait = 1");
                try {
                    exists = routineExists(c);
                } finally {
                    s.execute("SET SESSION wsrep_sync_wait = " + previous);
                }
            }
            if (!exists) {
                throw new DbTasksException("This MariaDB is a Galera node and dbtasks draws its fencing tokens there"
                        + " from " + NEXT_TOKEN + ", which this schema lacks: start one engine with migrate(true)"
                        + " (it creates the function), or create it as GaleraSchema.settle does");
            }
        } catch (SQLException e) {
            throw new DbTasksException("Checking for " + NEXT_TOKEN + " failed: " + e.getMessage(), e);
        }
    }

    /** @return the function's SECURITY_TYPE ({@code INVOKER} or {@code DEFINER}), or null if it is missing */
    private static String routineSecurity(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT SECURITY_TYPE FROM information_schema.ROUTINES"
                        + " WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = 'dbtasks_next_token'")) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    private static boolean routineExists(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM information_schema.ROUTINES"
                        + " WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = 'dbtasks_next_token'")) {
            rs.next();
            return rs.getLong(1) > 0;
        }
    }

    private static boolean exists(Connection c, String table) throws SQLException {
        try (var ps = c.prepareStatement("SELECT COUNT(*) FROM information_schema.TABLES"
                + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) > 0;
            }
        }
    }

    /** @return the first migration's statements, the token sequence NOCACHE and created last */
    static List<String> firstScript() {
        String text;
        try (InputStream in = GaleraSchema.class.getClassLoader().getResourceAsStream(FIRST_SCRIPT)) {
            if (in == null) {
                throw new IllegalStateException(FIRST_SCRIPT + " is missing from the classpath");
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("Reading " + FIRST_SCRIPT + " failed", e);
        }
        StringBuilder code = new StringBuilder();
        for (String line : text.split("\n")) {
            if (!line.strip().startsWith("--")) {
                code.append(line).append('\n');
            }
        }
        List<String> statements = new ArrayList<>();
        String sequence = null;
        for (String part : code.toString().split(";")) {
            String statement = part.strip();
            if (statement.isEmpty()) {
                continue;
            }
            if (statement.equals(SEQUENCE)) {
                sequence = SEQUENCE + " NOCACHE";
            } else {
                statements.add(statement);
            }
        }
        if (sequence == null) {
            throw new IllegalStateException(FIRST_SCRIPT + " no longer holds '" + SEQUENCE + ";'");
        }
        // Last: a script that failed half-way leaves no sequence, and the next start says so clearly
        // (a table exists) instead of going on with a schema missing tables.
        statements.add(sequence);
        return statements;
    }
}
