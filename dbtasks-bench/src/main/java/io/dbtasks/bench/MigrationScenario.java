package io.dbtasks.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import org.flywaydb.core.Flyway;

/**
 * The upgrade of an installation with a large history to history partitioned by day (migration
 * V30): in a database of its own beside the run's ({@code <database>_upgrade}, made and dropped
 * here), the schema as it was before V30, {@code historyTasks} finished tasks and their attempts
 * loaded directly ({@link HistoryLoader#loadBeforePartitions}) and {@value #LIVE} PENDING tasks,
 * then the wall time of building an engine that migrates ({@code DbTasks.builder(...).build()},
 * Flyway to the newest version), during which the migration holds the task and attempt tables. Then
 * the rows in each partition of the task table, to show where the history went. PostgreSQL and
 * MariaDB; on H2 nothing is measured (its history is not partitioned).
 */
final class MigrationScenario implements Scenario {
    /** The live tasks the installation has when it upgrades. */
    static final int LIVE = 10_000;

    @Override
    public String name() {
        return "migration";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        Database db = run.db();
        if (db == Database.H2) {
            Log.line("migration: H2 keeps one task table; nothing to measure");
            return List.of();
        }
        long size = run.config().historyTasks();
        String sibling;
        String url;
        try (Connection c = run.admin().getConnection();
                Statement s = c.createStatement()) {
            String current = c.getCatalog();
            sibling = current + "_upgrade";
            s.execute("DROP DATABASE IF EXISTS " + sibling);
            s.execute("CREATE DATABASE " + sibling);
            url = run.config().url().replaceFirst("/" + current + "(\\?|;|$)", "/" + sibling + "$1");
        }
        try {
            if (url.equals(run.config().url())) {
                throw new IllegalArgumentException("the migration scenario needs a --url that names its database"
                        + " in the path (jdbc:postgresql://host:port/name or jdbc:mariadb://host:port/name), got "
                        + url);
            }
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(url);
            if (run.config().user() != null) {
                config.setUsername(run.config().user());
                config.setPassword(run.config().password());
            }
            config.setMaximumPoolSize(4);
            config.setPoolName("bench-upgrade");
            try (HikariDataSource ds = new HikariDataSource(config)) {
                // The newest migration before V30 of each database (MariaDB has no V29).
                String before = db == Database.POSTGRESQL ? "29" : "28";
                Flyway.configure(getClass().getClassLoader())
                        .dataSource(ds)
                        .table("dbtasks_schema_history")
                        .locations("classpath:io/dbtasks/migration/" + db.id())
                        .target(before)
                        .load()
                        .migrate();
                long loadStart = System.nanoTime();
                long attempts = new HistoryLoader(ds, db).loadBeforePartitions(size);
                new TaskTable(ds, db).insertPending(LIVE);
                analyze(ds, db);
                Log.line(String.format(
                        Locale.ROOT,
                        "migration: V%s with %d finished tasks, %d attempts and %d PENDING loaded in %.1f s",
                        before,
                        size,
                        attempts,
                        LIVE,
                        (System.nanoTime() - loadStart) / 1e9));
                String loadBefore = HistoryScenario.load();
                long start = System.nanoTime();
                try (DbTasks upgraded = DbTasks.builder(ds).workers(false).build()) {
                    double seconds = (System.nanoTime() - start) / 1e9;
                    String where = partitionRows(ds, db);
                    String what = String.format(
                            Locale.ROOT,
                            "upgrade from V%s to history by day: %d finished tasks (+%d attempts), %d PENDING,"
                                    + " load %s; rows after: %s",
                            before,
                            size,
                            attempts,
                            LIVE,
                            loadBefore,
                            where);
                    Log.line(String.format(Locale.ROOT, "migration: %s: %.1f s", what, seconds));
                    return List.of(Result.plain(name(), db, what, size, seconds, null));
                }
            }
        } finally {
            try (Connection c = run.admin().getConnection();
                    Statement s = c.createStatement()) {
                s.execute("DROP DATABASE IF EXISTS " + sibling);
            } catch (SQLException e) {
                Log.line("migration: could not drop " + sibling + " (drop it by hand): " + e.getMessage());
            }
        }
    }

    private static void analyze(HikariDataSource ds, Database db) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            if (db == Database.POSTGRESQL) {
                s.execute("VACUUM (ANALYZE) dbtasks_task");
                s.execute("VACUUM (ANALYZE) dbtasks_attempt");
            } else {
                s.execute("ANALYZE TABLE dbtasks_task, dbtasks_attempt");
            }
        }
    }

    /** @return the task rows per history day bucket: live (0), from before (-1) and day partitions */
    private static String partitionRows(HikariDataSource ds, Database db) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT CASE WHEN history_day = 0 THEN 'live' WHEN history_day = -1"
                        + " THEN 'from before' ELSE 'by day' END AS bucket, COUNT(*) FROM dbtasks_task"
                        + " GROUP BY CASE WHEN history_day = 0 THEN 'live' WHEN history_day = -1 THEN 'from before'"
                        + " ELSE 'by day' END ORDER BY 1")) {
            StringBuilder out = new StringBuilder();
            while (rs.next()) {
                out.append(out.length() == 0 ? "" : ", ")
                        .append(rs.getString(1))
                        .append(' ')
                        .append(rs.getLong(2));
            }
            return out.toString();
        }
    }
}
