package io.dbtasks.internal.dialect;

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
 * The MariaDB schema on a Galera cluster ({@code wsrep_on}): Galera refuses a sequence with a cache
 * unless it is {@code INCREMENT BY 0}, and {@code INCREMENT BY 0} takes each node's {@code
 * auto_increment_offset}, so tokens drawn on different nodes would interleave out of order. The
 * fencing-token sequence must therefore be {@code NOCACHE} there: each draw writes the sequence row,
 * Galera certifies it like any row, and tokens increase in commit order across the cluster.
 *
 * <p>The first migration creates the sequence with the default cache, which a Galera node rejects.
 * Migrations are append-only (databases check their checksums), so on a fresh Galera schema {@link
 * #prepare} runs that first script itself with {@code NOCACHE} and Flyway baselines after it; a
 * schema migrated before its database joined a cluster keeps its history, and {@link #settle} turns
 * the cache off. Not thread-safe against a concurrent migration of the same schema (nor is Flyway on
 * Galera, whose lock is per node): migrate from one process.
 */
public final class GaleraSchema {
    private static final Logger log = LoggerFactory.getLogger(GaleraSchema.class);
    private static final String FIRST_SCRIPT = "io/dbtasks/migration/mariadb/V1__tasks.sql";
    private static final String SEQUENCE = "CREATE SEQUENCE dbtasks_token_seq";

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
     * On a Galera node, turns the token sequence's cache off if it has one (a schema migrated before
     * its database joined a cluster).
     *
     * @param dataSource the database, migrated
     * @throws SQLException if a query or the ALTER fails
     */
    public static void settle(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            if (!galera(c)) {
                return;
            }
            long cache;
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT cache_size FROM dbtasks_token_seq")) {
                rs.next();
                cache = rs.getLong(1);
            }
            if (cache != 0) {
                log.info("Galera cluster: turning the cache of dbtasks_token_seq off (was {})", cache);
                try (Statement s = c.createStatement()) {
                    s.execute("ALTER SEQUENCE dbtasks_token_seq NOCACHE");
                }
            }
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
