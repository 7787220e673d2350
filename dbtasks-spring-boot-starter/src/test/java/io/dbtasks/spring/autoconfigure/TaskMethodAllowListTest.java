package io.dbtasks.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskStatus;
import io.dbtasks.job.JobDefinition;
import io.dbtasks.job.JobTarget;
import io.dbtasks.job.StoredJob;
import io.dbtasks.spring.TaskMethod;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class TaskMethodAllowListTest {
    private static final String TRIPWIRE = "io.dbtasks.spring.tripwire.SpringTripwire";

    public record OrderDto(Long orderId, String userName, BigDecimal amount) {}

    /** The seed's order service, with two of its three methods annotated. */
    public static class OrderTaskService {
        final List<String> calls = new CopyOnWriteArrayList<>();

        @TaskMethod("order.no-param")
        public void noParamTask() {
            calls.add("noParamTask");
        }

        @TaskMethod("order.create")
        public void createOrder(OrderDto dto) {
            calls.add("createOrder " + dto);
        }

        /** Not annotated: allow-listed only where the configuration lists it. */
        public void syncOrder(Long orderId, String operator) {
            calls.add("syncOrder " + orderId + " " + operator);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        OrderTaskService orderTaskService() {
            return new OrderTaskService();
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    DataSourceAutoConfiguration.class,
                    JacksonAutoConfiguration.class,
                    DbTasksJobsAutoConfiguration.class,
                    DbTasksAutoConfiguration.class))
            .withUserConfiguration(Beans.class)
            .withPropertyValues(
                    "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                    "dbtasks.poll-interval=50ms",
                    "dbtasks.shutdown-timeout=5s");

    private static StoredJob settled(DbTasks tasks, String code, TaskStatus status) {
        await().atMost(Duration.ofSeconds(20))
                .until(() -> tasks.jobs().find(code).orElseThrow().lastStatus() == status);
        return tasks.jobs().find(code).orElseThrow();
    }

    private static JobDefinition job(String code, JobTarget target, String args) {
        return JobDefinition.builder(code)
                .business("order", code)
                .target(target)
                .arguments(args)
                .maxAttempts(1)
                .build();
    }

    @Test
    void annotatedMethodsAreAllowListedAtStartupAndOthersEndFailedWithWhatToAllowList() {
        System.clearProperty("dbtasks.test.spring-tripwire-loaded");
        // No engine allow-lists the other targets: none claims them, and they end FAILED once that has
        // lasted the grace.
        runner.withPropertyValues("dbtasks.unclaimable-grace=500ms").run(context -> {
            TaskMethodRegistrar registrar = context.getBean(TaskMethodRegistrar.class);
            assertThat(registrar.allowed())
                    .containsExactly(
                            "orderTaskService.createOrder(" + OrderDto.class.getTypeName() + ")",
                            "orderTaskService.noParamTask()");
            DbTasks tasks = context.getBean(DbTasks.class);
            OrderTaskService service = context.getBean(OrderTaskService.class);
            tasks.jobs()
                    .create(job(
                            "create_order_job",
                            JobTarget.of("orderTaskService", "createOrder", OrderDto.class.getTypeName()),
                            "[{\"orderId\":20001,\"userName\":\"Tom\",\"amount\":199.99}]"));
            tasks.jobs()
                    .create(job(
                            "sync_order_job",
                            JobTarget.of("orderTaskService", "syncOrder", "java.lang.Long", "java.lang.String"),
                            "[10001,\"admin\"]"));
            tasks.jobs().create(job("tripwire_job", JobTarget.of(TRIPWIRE, "run", TRIPWIRE), "[{}]"));
            tasks.jobs().runBusinessType("order");

            settled(tasks, "create_order_job", TaskStatus.SUCCEEDED);
            assertThat(service.calls)
                    .containsExactly("createOrder " + new OrderDto(20001L, "Tom", new BigDecimal("199.99")));
            assertThat(settled(tasks, "sync_order_job", TaskStatus.FAILED).lastError())
                    .contains("can run job target orderTaskService.syncOrder(java.lang.Long, java.lang.String)")
                    .contains("@TaskMethod")
                    .contains("dbtasks.jobs.allowed-methods");
            assertThat(settled(tasks, "tripwire_job", TaskStatus.FAILED).lastError())
                    .contains("can run job target " + TRIPWIRE + ".run(" + TRIPWIRE + ")");
            assertThat(System.getProperty("dbtasks.test.spring-tripwire-loaded"))
                    .isNull();
        });
    }

    @Test
    void configuredMethodsAreAllowListedByNameAndDeclaredParameterTypes() {
        runner.withPropertyValues(
                        "dbtasks.jobs.allowed-methods[0]=orderTaskService.syncOrder(java.lang.Long, java.lang.String)")
                .run(context -> {
                    assertThat(context.getBean(TaskMethodRegistrar.class).allowed())
                            .contains("orderTaskService.syncOrder(java.lang.Long, java.lang.String)");
                    DbTasks tasks = context.getBean(DbTasks.class);
                    tasks.jobs()
                            .create(job(
                                    "sync_order_job",
                                    JobTarget.of("orderTaskService", "syncOrder", "java.lang.Long", "java.lang.String"),
                                    "[10001,\"admin\"]"));
                    tasks.jobs().run("sync_order_job");
                    settled(tasks, "sync_order_job", TaskStatus.SUCCEEDED);
                    assertThat(context.getBean(OrderTaskService.class).calls).containsExactly("syncOrder 10001 admin");
                });
    }

    @Test
    void aConfiguredEntryThatMatchesNoMethodFailsTheStartup() {
        runner.withPropertyValues("dbtasks.jobs.allowed-methods[0]=orderTaskService.syncOrder(long)")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .extracting(org.springframework.core.NestedExceptionUtils::getMostSpecificCause)
                        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE)
                        .hasMessageContaining("matches no public method of bean 'orderTaskService'"));
        runner.withPropertyValues("dbtasks.jobs.allowed-methods[0]=missingBean.run")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .extracting(org.springframework.core.NestedExceptionUtils::getMostSpecificCause)
                        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE)
                        .hasMessageContaining("names bean 'missingBean', which does not exist"));
    }
}
