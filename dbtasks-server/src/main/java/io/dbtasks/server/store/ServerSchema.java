package io.dbtasks.server.store;

import io.dbtasks.DbTasks;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.springframework.stereotype.Component;

/**
 * Migrates the server's own tables (users it generated, Idempotency-Key records, live instances)
 * from {@code io/dbtasks/server/migration/<dialect>} with a history table of their own,
 * {@code dbtasks_server_schema_history}. They are kept apart from the library's migrations so an
 * application that embeds only dbtasks-core never gets server tables, and so server versions never
 * collide with the library's. Runs once, when the bean is created, after the engine has migrated
 * its own schema.
 */
@Component
public class ServerSchema {
    private final String dialect;

    /**
     * @param dataSource the server's database
     * @param dbTasks the engine, whose detected dialect picks the migrations
     */
    public ServerSchema(DataSource dataSource, DbTasks dbTasks) {
        this.dialect = dbTasks.dialect();
        Flyway.configure(ServerSchema.class.getClassLoader())
                .dataSource(dataSource)
                .table("dbtasks_server_schema_history")
                .locations("classpath:io/dbtasks/server/migration/" + dialect)
                .baselineOnMigrate(true)
                .baselineVersion("0")
                .load()
                .migrate();
    }

    /** @return the database dialect: {@code postgresql}, {@code mariadb} or {@code h2} */
    public String dialect() {
        return dialect;
    }
}
