package io.dbtasks.internal.maintenance;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.dialect.Dialects;
import io.dbtasks.internal.lock.JdbcLeaseLocks;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.lock.spi.Renewal;
import io.dbtasks.testing.TestDatabase;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL only: the statistics check of {@link QueueTableVacuum} on a table that has outgrown its
 * statistics. PostgreSQL skips an ANALYZE by a user who does not own the table with a warning, not
 * an error; the check must notice, stop, and not try again every 500 ms. The probe table is a
 * {@code dbtasks_task_live} of a schema of its own, found first on the connections' search path, with
 * autovacuum off so that nothing else analyzes it meanwhile; the lease lock is the engine's own
 * {@code dbtasks_lock}.
 */
class QueueTableVacuumAnalyzeTest {
    private static final String SCHEMA = "analyze_probe";
    private static final String NOT_OWNER = "dbtasks_not_owner";

    @BeforeEach
    void outgrownTable() throws SQLException {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "PostgreSQL is not in dbtasks.test.databases");
        DataSource admin = TestDatabase.POSTGRESQL.dataSource();
        DbTasks.builder(admin).workers(false).build().close(); // the engine's schema, dbtasks_lock included
        try (Connection c = admin.getConnection();
                Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
            s.execute("CREATE SCHEMA " + SCHEMA);
            s.execute("CREATE TABLE " + SCHEMA
                    + ".dbtasks_task_live (id BIGINT, pad TEXT) WITH (autovacuum_enabled = false)");
            s.execute("ANALYZE " + SCHEMA + ".dbtasks_task_live"); // statistics of an empty table: 0 pages
            s.execute("INSERT INTO " + SCHEMA + ".dbtasks_task_live SELECT g, repeat('x', 200)"
                    + " FROM generate_series(1, 20000) g"); // about 600 pages: past 2 x 0 + 64
            s.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '" + NOT_OWNER + "')"
                    + " THEN CREATE ROLE " + NOT_OWNER + " LOGIN; END IF; END $$");
            s.execute("GRANT USAGE ON SCHEMA " + SCHEMA + " TO " + NOT_OWNER);
            s.execute("GRANT SELECT ON " + SCHEMA + ".dbtasks_task_live TO " + NOT_OWNER);
            s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON dbtasks_lock TO " + NOT_OWNER);
            s.execute("GRANT USAGE, SELECT, UPDATE ON SEQUENCE dbtasks_token_seq TO " + NOT_OWNER);
        }
    }

    @AfterEach
    void dropProbe() throws SQLException {
        if (!TestDatabase.POSTGRESQL.required()) {
            return; // the test did not run, there is nothing to drop
        }
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
            s.execute("DELETE FROM dbtasks_lock WHERE name = '" + QueueTableVacuum.LOCK + "'");
        }
    }

    @Test
    void aRefusedAnalyzeStopsTheCheckAndTheOwnersAnalyzeRefreshesTheStatistics() throws SQLException {
        try (HikariDataSource notOwner = pool(NOT_OWNER);
                Renewal renewal = new Renewal("probe-")) {
            QueueTableVacuum check = check(notOwner, renewal);
            check.checkStatistics();
            assertThat(statisticsPages())
                    .as("PostgreSQL skipped the ANALYZE of a user who does not own the table")
                    .isZero();
            assertThat(check.analyzeRefused())
                    .as("the check saw the statistics unchanged and stopped")
                    .isTrue();
        }
        try (HikariDataSource owner = pool(null);
                Renewal renewal = new Renewal("probe-")) {
            QueueTableVacuum check = check(owner, renewal);
            check.checkStatistics();
            assertThat(statisticsPages())
                    .as("the owner's ANALYZE took the table's size")
                    .isGreaterThan(QueueTableVacuum.GROWTH_SLACK_PAGES);
            assertThat(check.analyzeRefused()).isFalse();
        }
    }

    @Test
    void aLockLeftBehindByAnEngineWhosePoolClosedMidAnalyzeFreesItselfWithinTheShortLease() throws Exception {
        try (HikariDataSource owner = pool(null);
                Renewal renewal = new Renewal("probe-")) {
            // As when the application closes its pool while a stopping engine's ANALYZE runs: every
            // connection asked for after the ANALYZE fails, the lock's release included.
            AtomicBoolean analyzed = new AtomicBoolean();
            DataSource closingAfterAnalyze = (DataSource) Proxy.newProxyInstance(
                    getClass().getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                        if (method.getName().equals("getConnection") && analyzed.get()) {
                            throw new SQLException("pool closed");
                        }
                        Object result = invoke(method, owner, args);
                        return result instanceof Connection c ? noticingAnalyze(c, analyzed) : result;
                    });
            QueueTableVacuum check = check(closingAfterAnalyze, renewal);
            check.checkStatistics();
            assertThat(analyzed).as("the ANALYZE ran").isTrue();
        }
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT EXTRACT(EPOCH FROM expires_at - acquired_at) FROM dbtasks_lock"
                        + " WHERE name = '" + QueueTableVacuum.LOCK + "'")) {
            assertThat(rs.next())
                    .as("the lock was left behind, its release failing")
                    .isTrue();
            assertThat(rs.getDouble(1))
                    .as("seconds until it frees itself: a lease of well under a minute, not the ten minutes every"
                            + " other engine's vacuum and statistics check used to wait")
                    .isLessThanOrEqualTo(60);
        }
    }

    private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** @return {@code c}, noting in {@code analyzed} when a statement of it runs an ANALYZE */
    private static Connection noticingAnalyze(Connection c, AtomicBoolean analyzed) {
        return (Connection) Proxy.newProxyInstance(
                QueueTableVacuumAnalyzeTest.class.getClassLoader(), new Class<?>[] {Connection.class}, (p, m, a) -> {
                    Object result = invoke(m, c, a);
                    if (result instanceof Statement st && m.getName().equals("createStatement")) {
                        return Proxy.newProxyInstance(
                                QueueTableVacuumAnalyzeTest.class.getClassLoader(),
                                new Class<?>[] {Statement.class},
                                (p2, m2, a2) -> {
                                    Object r = invoke(m2, st, a2);
                                    if (m2.getName().equals("execute")
                                            && a2 != null
                                            && a2[0] instanceof String sql
                                            && sql.startsWith("ANALYZE")) {
                                        analyzed.set(true);
                                    }
                                    return r;
                                });
                    }
                    return result;
                });
    }

    private static QueueTableVacuum check(DataSource ds, Renewal renewal) {
        Jdbc jdbc = new Jdbc(ds);
        Dialect dialect = Dialects.detect(ds);
        return new QueueTableVacuum(jdbc, dialect, new JdbcLeaseLocks(jdbc, dialect, "analyze-probe", renewal));
    }

    /** A pool whose connections find the probe table first; as {@code user}, or the tests' own if null. */
    private static HikariDataSource pool(String user) {
        String url = TestDatabase.POSTGRESQL.url();
        if (user != null) {
            url = url.matches(".*[?&]user=.*")
                    ? url.replaceAll("([?&])user=[^&]*", "$1user=" + user)
                    : url + (url.contains("?") ? "&" : "?") + "user=" + user;
        }
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url + (url.contains("?") ? "&" : "?") + "currentSchema=" + SCHEMA + ",public");
        c.setMaximumPoolSize(2);
        c.setPoolName("analyze-probe");
        return new HikariDataSource(c);
    }

    private static long statisticsPages() throws SQLException {
        try (Connection c = TestDatabase.POSTGRESQL.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "SELECT relpages FROM pg_class WHERE oid = '" + SCHEMA + ".dbtasks_task_live'::regclass")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
