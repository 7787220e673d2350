package io.dbtasks.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.spring.DbTasksDataSource;
import io.dbtasks.spring.KindHandler;
import io.dbtasks.spring.TaskTemplate;
import io.dbtasks.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * With a DataSource marked {@link DbTasksDataSource @DbTasksDataSource} among several, the engine
 * and {@link TaskTemplate} use that one only: its schema, its tasks, its transactions. The marked
 * DataSource is each test database in turn; the application's other DataSources are H2 in-memory
 * databases, which must hold no dbtasks table afterwards.
 */
class DbTasksDataSourceTest {
    static final List<String> HANDLED = new CopyOnWriteArrayList<>();

    private final String kind = "marked." + UUID.randomUUID();

    private ApplicationContextRunner runner(TestDatabase database) {
        Assumptions.assumeTrue(database.required(), database + " is not in dbtasks.test.databases");
        String url = database == TestDatabase.H2
                ? "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1"
                : database.url();
        return new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(DbTasksAutoConfiguration.class, TaskTemplateAutoConfiguration.class))
                .withPropertyValues("dbtasks.poll-interval=50ms", "dbtasks.shutdown-timeout=5s")
                .withBean("tasksUrl", String.class, () -> url)
                .withBean(
                        "handler",
                        KindHandler.class,
                        () -> KindHandler.of(kind, String.class, (ctx, p) -> {
                            HANDLED.add(p);
                        }));
    }

    /** The application's primary DataSource plus one marked for the engine. */
    @Configuration(proxyBeanMethods = false)
    static class PrimaryAndMarked {
        @Bean
        @Primary
        DataSource appDataSource() {
            return h2("app");
        }

        @Bean
        @DbTasksDataSource
        HikariDataSource tasksDataSource(String tasksUrl) {
            return pool(tasksUrl);
        }
    }

    /** Two DataSources, neither primary, one marked for the engine. */
    @Configuration(proxyBeanMethods = false)
    static class NoPrimary {
        @Bean
        DataSource ordersDataSource() {
            return h2("orders");
        }

        @Bean
        @DbTasksDataSource
        HikariDataSource tasksDataSource(String tasksUrl) {
            return pool(tasksUrl);
        }
    }

    /** Two DataSources both marked: the engine cannot tell which to use. */
    @Configuration(proxyBeanMethods = false)
    static class TwoMarked {
        @Bean
        @DbTasksDataSource
        DataSource oneDataSource() {
            return h2("one");
        }

        @Bean
        @DbTasksDataSource
        DataSource otherDataSource() {
            return h2("other");
        }
    }

    /** Two DataSources both marked, one of them primary: still two marks, and no way to tell. */
    @Configuration(proxyBeanMethods = false)
    static class TwoMarkedOnePrimary {
        @Bean
        @Primary
        @DbTasksDataSource
        DataSource oneDataSource() {
            return h2("one");
        }

        @Bean
        @DbTasksDataSource
        DataSource otherDataSource() {
            return h2("other");
        }
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void theEngineStoresAndRunsItsTasksInTheMarkedDataSourceOnly(TestDatabase database) {
        runner(database).withUserConfiguration(PrimaryAndMarked.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(DbTasks.class).hasSingleBean(TaskTemplate.class);
            DbTasks dbTasks = context.getBean(DbTasks.class);
            assertThat(dbTasks.dialect()).isEqualTo(database.name().toLowerCase(Locale.ROOT));
            String payload = UUID.randomUUID().toString();

            context.getBean(TaskTemplate.class).enqueue(kind, payload);

            await().atMost(Duration.ofSeconds(20)).until(() -> HANDLED.contains(payload));
            DataSource marked = context.getBean("tasksDataSource", DataSource.class);
            assertThat(tasks(marked, kind)).isEqualTo(1);
            assertThat(dbtasksTables(context.getBean("appDataSource", DataSource.class)))
                    .as("dbtasks tables in the application's primary DataSource")
                    .isZero();
        });
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void theTemplateJoinsTransactionsOnTheMarkedDataSource(TestDatabase database) {
        runner(database).withUserConfiguration(PrimaryAndMarked.class).run(context -> {
            DataSource marked = context.getBean("tasksDataSource", DataSource.class);
            TaskTemplate template = context.getBean(TaskTemplate.class);
            TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(marked));

            tx.executeWithoutResult(status -> {
                assertThat(template.inTransaction()).isTrue();
                template.enqueue(TaskRequest.builder(kind)
                        .payload("rolled back")
                        .runAt(java.time.Instant.now().plus(Duration.ofHours(1)))
                        .build());
                status.setRollbackOnly();
            });

            assertThat(tasks(marked, kind)).as("tasks after the rollback").isZero();
        });
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void aMarkedDataSourceNeedsNoPrimaryAmongSeveral(TestDatabase database) {
        runner(database).withUserConfiguration(NoPrimary.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(DbTasks.class).hasSingleBean(TaskTemplate.class);
            assertThat(context.getBean(DbTasks.class).dialect())
                    .isEqualTo(database.name().toLowerCase(Locale.ROOT));
            assertThat(dbtasksTables(context.getBean("ordersDataSource", DataSource.class)))
                    .isZero();
        });
    }

    @ParameterizedTest
    @EnumSource(value = TestDatabase.class, names = "H2")
    void twoMarkedDataSourcesFailTheStartup(TestDatabase database) {
        runner(database).withUserConfiguration(TwoMarked.class).run(context -> {
            assertThat(context).hasFailed();
            Throwable cause = context.getStartupFailure();
            while (cause != null && !(cause instanceof IllegalStateException)) {
                cause = cause.getCause();
            }
            assertThat(cause)
                    .as("the startup failure's IllegalStateException")
                    .isNotNull()
                    .hasMessageContaining("more than one DataSource bean is marked @DbTasksDataSource")
                    .hasMessageContaining("oneDataSource")
                    .hasMessageContaining("otherDataSource")
                    .hasMessageContaining("mark only the one");
        });
    }

    @ParameterizedTest
    @EnumSource(value = TestDatabase.class, names = "H2")
    void twoMarkedDataSourcesFailTheStartupEvenWhenOneIsPrimary(TestDatabase database) {
        runner(database).withUserConfiguration(TwoMarkedOnePrimary.class).run(context -> {
            assertThat(context).hasFailed();
            Throwable cause = context.getStartupFailure();
            while (cause != null && !(cause instanceof IllegalStateException)) {
                cause = cause.getCause();
            }
            assertThat(cause)
                    .as("the startup failure's IllegalStateException")
                    .isNotNull()
                    .hasMessageContaining("more than one DataSource bean is marked @DbTasksDataSource")
                    .hasMessageContaining("oneDataSource")
                    .hasMessageContaining("otherDataSource");
        });
    }

    @ParameterizedTest
    @EnumSource(value = TestDatabase.class, names = "H2")
    void withoutAMarkOrAPrimaryAmongSeveralNoEngineIsConfigured(TestDatabase database) {
        runner(database)
                .withBean("oneDataSource", DataSource.class, () -> h2("one"))
                .withBean("otherDataSource", DataSource.class, () -> h2("other"))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(DbTasks.class)
                        .doesNotHaveBean(TaskTemplate.class));
    }

    private static DataSource h2(String name) {
        org.h2.jdbcx.JdbcDataSource ds = new org.h2.jdbcx.JdbcDataSource();
        ds.setURL("jdbc:h2:mem:" + name + "-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    private static HikariDataSource pool(String url) {
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl(url);
        pool.setMaximumPoolSize(4);
        return pool;
    }

    private static int tasks(DataSource dataSource, String kind) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM dbtasks_task WHERE kind = ?")) {
            ps.setString(1, kind);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private static int dbtasksTables(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection();
                ResultSet rs = c.getMetaData().getTables(null, null, "%", new String[] {"TABLE"})) {
            int n = 0;
            while (rs.next()) {
                if (rs.getString("TABLE_NAME").toLowerCase(Locale.ROOT).startsWith("dbtasks")) {
                    n++;
                }
            }
            return n;
        }
    }
}
