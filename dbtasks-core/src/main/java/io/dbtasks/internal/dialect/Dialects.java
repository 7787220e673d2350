package io.dbtasks.internal.dialect;

import io.dbtasks.DbTasksException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Picks the dialect from the JDBC metadata of a live connection. */
public final class Dialects {
    private static final Logger log = LoggerFactory.getLogger(Dialects.class);

    private Dialects() {}

    /**
     * @param dataSource the database
     * @return its dialect
     * @throws DbTasksException if it cannot be reached or is not supported
     */
    public static Dialect detect(DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            DatabaseMetaData md = c.getMetaData();
            Dialect d = forProduct(md.getDatabaseProductName(), md.getDatabaseProductVersion());
            return d instanceof MariaDbDialect && GaleraSchema.galera(c) ? new MariaDbDialect(true) : d;
        } catch (SQLException e) {
            throw new DbTasksException(
                    "Could not connect to detect the database dialect: " + e.getMessage()
                            + "; check the DataSource URL and credentials",
                    e);
        }
    }

    /**
     * @param product the JDBC product name
     * @param version the JDBC product version
     * @return the dialect
     * @throws DbTasksException if the product is not supported
     */
    public static Dialect forProduct(String product, String version) {
        String p = product.toLowerCase(Locale.ROOT);
        String v = version == null ? "" : version.toLowerCase(Locale.ROOT);
        if (p.contains("postgresql")) {
            return new PostgresDialect();
        }
        if (p.contains("h2")) {
            if (v.startsWith("2.4.240")) {
                log.warn(
                        "H2 {} binds a CHECK constraint to the connection that created it: once the"
                                + " connection that created the dbtasks tables is closed, every enqueue fails with"
                                + " 'Check constraint invalid'. Use H2 2.5.250 or later (Maven: com.h2database:h2;"
                                + " Spring Boot: the h2.version property).",
                        version);
            }
            return new H2Dialect();
        }
        if (p.contains("mariadb") || (p.contains("mysql") && v.contains("mariadb"))) {
            return new MariaDbDialect();
        }
        throw new DbTasksException("Database '" + product + " " + version
                + "' is not supported; dbtasks runs on PostgreSQL, MariaDB 10.6+ and H2 2.x");
    }
}
