package io.dbtasks.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.InvalidPayloadException;
import io.dbtasks.RetryPolicy;
import io.dbtasks.Task;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.spring.DuplicateKindException;
import io.dbtasks.spring.KindHandler;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

class DbTasksAutoConfigurationTest {

    record Order(long orderId, String operator) {}

    /** Each test gets its own in-memory H2 database and fast engine timings. */
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, DbTasksAutoConfiguration.class))
            .withPropertyValues(
                    "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                    "dbtasks.poll-interval=50ms",
                    "dbtasks.shutdown-timeout=5s");

    @Test
    void engineIsBuiltOnTheDataSourceAndStartedWithTheContext() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(DbTasks.class).hasSingleBean(DbTasksLifecycle.class);
            DbTasks dbTasks = context.getBean(DbTasks.class);
            assertThat(dbTasks.dialect()).isEqualTo("h2");
            assertThat(dbTasks.isRunning()).isTrue();
            assertThat(context.getBean(DbTasksLifecycle.class).isRunning()).isTrue();
        });
    }

    /**
     * An application started while its database is down starts: the engine is built without it and
     * reports DOWN until it can reach it (the core's BuildDuringOutageTest shows it then runs).
     */
    @Test
    void theContextStartsWhileTheDatabaseIsDown() {
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(DataSourceAutoConfiguration.class, DbTasksAutoConfiguration.class))
                .withPropertyValues(
                        "spring.datasource.url=jdbc:postgresql://127.0.0.1:1/down?connectTimeout=1",
                        "spring.datasource.hikari.connection-timeout=500",
                        "dbtasks.poll-interval=50ms",
                        "dbtasks.shutdown-timeout=1s")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(DbTasks.class);
                    DbTasks dbTasks = context.getBean(DbTasks.class);
                    assertThat(dbTasks.isRunning()).isTrue();
                    assertThat(dbTasks.dialect()).isEqualTo("unknown");
                    assertThat(dbTasks.health().healthy()).isFalse();
                    assertThat(dbTasks.health().unavailable()).contains("not reached its database");
                    assertThatThrownBy(() -> dbTasks.enqueue(TaskRequest.of("any", null)))
                            .isInstanceOf(io.dbtasks.DbTasksException.class)
                            .hasMessageContaining("not reached its database");
                });
    }

    @Test
    void contextCloseStopsTheEngineAfterRunningTasksFinish() {
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean finished = new AtomicBoolean();
        runner.withBean(
                        "slow",
                        KindHandler.class,
                        () -> KindHandler.of("slow", Void.class, (ctx, p) -> {
                            started.countDown();
                            Thread.sleep(300);
                            finished.set(true);
                        }))
                .run(context -> {
                    DbTasks dbTasks = context.getBean(DbTasks.class);
                    dbTasks.enqueue(TaskRequest.of("slow", null));
                    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
                    context.close();
                    assertThat(finished).isTrue();
                    assertThat(dbTasks.isRunning()).isFalse();
                });
    }

    @Test
    void propertiesAreBoundAndApplied() {
        runner.withPropertyValues(
                        "dbtasks.queues.reports=2",
                        "dbtasks.lease=12s",
                        "dbtasks.heartbeat-interval=3s",
                        "dbtasks.rescue-interval=1s",
                        "dbtasks.claim-batch=10",
                        "dbtasks.claim-ahead=false",
                        "dbtasks.default-max-attempts=5",
                        "dbtasks.default-timeout=1m",
                        "dbtasks.default-retry.backoff=fixed",
                        "dbtasks.default-retry.initial=100ms",
                        "dbtasks.worker-id=node-1")
                .withBean("report", KindHandler.class, () -> KindHandler.of("report", Void.class, (ctx, p) -> {}))
                .run(context -> {
                    DbTasksProperties p = context.getBean(DbTasksProperties.class);
                    assertThat(p.getQueues()).containsEntry("reports", 2);
                    assertThat(p.getLease()).isEqualTo(Duration.ofSeconds(12));
                    assertThat(p.getHeartbeatInterval()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(p.getPollInterval()).isEqualTo(Duration.ofMillis(50));
                    assertThat(p.getRescueInterval()).isEqualTo(Duration.ofSeconds(1));
                    assertThat(p.getShutdownTimeout()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(p.getClaimBatch()).isEqualTo(10);
                    assertThat(p.isClaimAhead()).isFalse();
                    assertThat(p.getDefaultTimeout()).isEqualTo(Duration.ofMinutes(1));
                    assertThat(p.getDefaultRetry().toPolicy()).isEqualTo(RetryPolicy.fixed(Duration.ofMillis(100)));
                    assertThat(p.isMigrate()).isTrue();
                    assertThat(p.getWorkers().isEnabled()).isTrue();

                    DbTasks dbTasks = context.getBean(DbTasks.class);
                    assertThat(dbTasks.workerId()).isEqualTo("node-1");
                    // The engine works the configured queue, and unset max attempts take the property.
                    Task task = dbTasks.enqueue(TaskRequest.builder("report")
                                    .queue("reports")
                                    .build())
                            .task();
                    assertThat(task.maxAttempts()).isEqualTo(5);
                    await().atMost(Duration.ofSeconds(10)).until(() -> status(dbTasks, task) == TaskStatus.SUCCEEDED);
                    assertThat(dbTasks.attempts(task.id()).get(0).worker()).isEqualTo("node-1");
                });
    }

    @Test
    void defaultRetryPropertiesPaceRetries() {
        AtomicInteger runs = new AtomicInteger();
        runner.withPropertyValues("dbtasks.default-retry.backoff=fixed", "dbtasks.default-retry.initial=50ms")
                .withBean(
                        "flaky",
                        KindHandler.class,
                        () -> KindHandler.of("flaky", Void.class, (ctx, p) -> {
                            runs.incrementAndGet();
                            if (ctx.attempt() < 3) {
                                throw new IllegalStateException("attempt " + ctx.attempt() + " fails");
                            }
                        }))
                .run(context -> {
                    DbTasks dbTasks = context.getBean(DbTasks.class);
                    Task task = dbTasks.enqueue(TaskRequest.of("flaky", null)).task();
                    // The engine default (exponential from 1 s) would need at least 3 s for two retries.
                    await().atMost(Duration.ofMillis(2500)).until(() -> status(dbTasks, task) == TaskStatus.SUCCEEDED);
                    assertThat(runs).hasValue(3);
                });
    }

    @Test
    void workersCanBeDisabledForAProducerOnlyEngine() {
        runner.withPropertyValues("dbtasks.workers.enabled=false")
                .withBean("noop", KindHandler.class, () -> KindHandler.of("noop", Void.class, (ctx, p) -> {}))
                .run(context -> {
                    DbTasks dbTasks = context.getBean(DbTasks.class);
                    Task task = dbTasks.enqueue(TaskRequest.of("noop", null)).task();
                    Thread.sleep(500);
                    assertThat(status(dbTasks, task)).isEqualTo(TaskStatus.PENDING);
                });
    }

    @Test
    void handlerBeansAreRegisteredByKindAndRunTasks() {
        runner.withUserConfiguration(HandlerConfig.class).run(context -> {
            DbTasks dbTasks = context.getBean(DbTasks.class);
            HandlerConfig config = context.getBean(HandlerConfig.class);
            assertThat(dbTasks.kinds()).containsExactlyInAnyOrder("order.sync", "ping");

            EnqueueResult sync = dbTasks.enqueue(TaskRequest.of("order.sync", new Order(10001, "admin")));
            EnqueueResult ping = dbTasks.enqueue(TaskRequest.of("ping", null));
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> status(dbTasks, sync.task()) == TaskStatus.SUCCEEDED
                            && status(dbTasks, ping.task()) == TaskStatus.SUCCEEDED);
            assertThat(config.orders).containsExactly(new Order(10001, "admin"));
            assertThat(config.pings).hasValue(1);
        });
    }

    @Test
    void applicationJsonMapperReadsPayloads() {
        String withUnknownProperty = "{\"orderId\":1,\"operator\":\"a\",\"extra\":true}";
        // The engine's own mapper tolerates unknown properties; this application's mapper does not.
        runner.withUserConfiguration(HandlerConfig.class)
                .withBean(
                        JsonMapper.class,
                        () -> JsonMapper.builder()
                                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                                .build())
                .run(context -> assertThatThrownBy(
                                () -> context.getBean(DbTasks.class).validate("order.sync", withUnknownProperty))
                        .isInstanceOf(InvalidPayloadException.class)
                        .hasMessageContaining("extra"));
        runner.withUserConfiguration(HandlerConfig.class)
                .run(context -> context.getBean(DbTasks.class).validate("order.sync", withUnknownProperty));
    }

    @Test
    void jsonMapperFromJacksonAutoConfigurationIsUsed() {
        runner.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class))
                .withPropertyValues("spring.jackson.deserialization.fail-on-unknown-properties=true")
                .withUserConfiguration(HandlerConfig.class)
                .run(context -> {
                    assertThat(context).hasSingleBean(JsonMapper.class);
                    assertThatThrownBy(() -> context.getBean(DbTasks.class)
                                    .validate("order.sync", "{\"orderId\":1,\"unknown\":2}"))
                            .isInstanceOf(InvalidPayloadException.class);
                });
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnDbTasks() {
        runner.withUserConfiguration(OwnEngineConfig.class).run(context -> {
            assertThat(context).hasSingleBean(DbTasks.class);
            DbTasks dbTasks = context.getBean(DbTasks.class);
            assertThat(dbTasks).isSameAs(context.getBean(OwnEngineConfig.class).engine);
            assertThat(dbTasks.workerId()).isEqualTo("own-engine");
            // The lifecycle manages the application's engine too.
            assertThat(dbTasks.isRunning()).isTrue();
        });
    }

    @Test
    void twoHandlerBeansForOneKindFailTheStartup() {
        runner.withBean("first", KindHandler.class, () -> KindHandler.of("same", Void.class, (ctx, p) -> {}))
                .withBean("second", KindHandler.class, () -> KindHandler.of("same", Void.class, (ctx, p) -> {}))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .isInstanceOf(DuplicateKindException.class)
                            .hasMessageContaining("'same'")
                            .hasMessageContaining("first")
                            .hasMessageContaining("second");
                });
    }

    @Test
    void invalidPropertyFailsTheStartupWithTheEngineMessage() {
        runner.withPropertyValues("dbtasks.claim-batch=0").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("claimBatch must be 1 to 1000");
        });
    }

    @Test
    void disabledByProperty() {
        runner.withPropertyValues("dbtasks.enabled=false")
                .run(context ->
                        assertThat(context).doesNotHaveBean(DbTasks.class).doesNotHaveBean(DbTasksLifecycle.class));
    }

    @Test
    void twoDataSourcesWithoutAPrimaryMeanNoEngine() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DbTasksAutoConfiguration.class))
                .withBean("first", DataSource.class, () -> h2("first"))
                .withBean("second", DataSource.class, () -> h2("second"))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DbTasks.class));
    }

    @Test
    void kindHandlerWithoutAKindFailsTheStartup() {
        runner.withBean("nameless", KindHandler.class, () -> KindHandler.of(" ", Void.class, (ctx, p) -> {}))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .hasMessageContaining("KindHandler bean 'nameless'")
                            .hasMessageContaining("non-blank kind()");
                });
    }

    private static DataSource h2(String name) {
        org.h2.jdbcx.JdbcDataSource ds = new org.h2.jdbcx.JdbcDataSource();
        ds.setURL("jdbc:h2:mem:" + name + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    @Test
    void noDataSourceMeansNoEngine() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DbTasksAutoConfiguration.class))
                .run(context ->
                        assertThat(context).doesNotHaveBean(DbTasks.class).doesNotHaveBean(DbTasksLifecycle.class));
    }

    private static TaskStatus status(DbTasks dbTasks, Task task) {
        return dbTasks.find(task.id()).orElseThrow().status();
    }

    @Configuration(proxyBeanMethods = false)
    static class HandlerConfig {
        final List<Order> orders = new CopyOnWriteArrayList<>();
        final AtomicInteger pings = new AtomicInteger();

        @Bean
        KindHandler<Order> orderSync() {
            return KindHandler.of("order.sync", Order.class, (ctx, order) -> orders.add(order));
        }

        @Bean
        PingHandler ping() {
            return new PingHandler(pings);
        }
    }

    /** A handler written as a class rather than a lambda. */
    static class PingHandler implements KindHandler<Void> {
        private final AtomicInteger pings;

        PingHandler(AtomicInteger pings) {
            this.pings = pings;
        }

        @Override
        public String kind() {
            return "ping";
        }

        @Override
        public Class<Void> payloadType() {
            return Void.class;
        }

        @Override
        public void handle(io.dbtasks.TaskContext context, Void payload) {
            pings.incrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnEngineConfig {
        DbTasks engine;

        @Bean
        DbTasks ownDbTasks(DataSource dataSource) {
            engine = DbTasks.builder(dataSource).workerId("own-engine").build();
            return engine;
        }
    }
}
