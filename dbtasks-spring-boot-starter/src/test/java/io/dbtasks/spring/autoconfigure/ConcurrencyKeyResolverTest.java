package io.dbtasks.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.spring.ConcurrencyKeyResolver;
import io.dbtasks.spring.TaskTemplate;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** A {@link ConcurrencyKeyResolver} bean keys its kind's tasks enqueued through {@link TaskTemplate}. */
class ConcurrencyKeyResolverTest {
    record Invoice(String tenant, long number) {}

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    DataSourceAutoConfiguration.class,
                    DbTasksAutoConfiguration.class,
                    TaskTemplateAutoConfiguration.class))
            .withPropertyValues(
                    "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                    "dbtasks.poll-interval=50ms",
                    "dbtasks.shutdown-timeout=5s")
            .withBean(
                    "invoiceKey",
                    ConcurrencyKeyResolver.class,
                    () -> ConcurrencyKeyResolver.of("invoice.sync", Invoice.class, Invoice::tenant));

    @Test
    void theKeyOfAKindIsDerivedFromThePayloadUnlessTheRequestSetsOne() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            DbTasks dbTasks = context.getBean(DbTasks.class);
            TaskTemplate template = context.getBean(TaskTemplate.class);

            long derived = template.enqueue("invoice.sync", new Invoice("acme", 1))
                    .task()
                    .id();
            long explicit = template.enqueue(TaskRequest.builder("invoice.sync")
                            .payload(new Invoice("acme", 2))
                            .concurrencyKey("manual")
                            .build())
                    .task()
                    .id();
            List<Long> many = template
                    .enqueueAll(List.of(
                            TaskRequest.of("invoice.sync", new Invoice("globex", 3)),
                            TaskRequest.of("other.kind", new Invoice("initech", 4))))
                    .stream()
                    .map(r -> r.task().id())
                    .toList();

            assertThat(dbTasks.find(derived).orElseThrow().concurrencyKey()).isEqualTo("acme");
            assertThat(dbTasks.find(explicit).orElseThrow().concurrencyKey()).isEqualTo("manual");
            assertThat(dbTasks.find(many.get(0)).orElseThrow().concurrencyKey()).isEqualTo("globex");
            assertThat(dbTasks.find(many.get(1)).orElseThrow().concurrencyKey())
                    .as("a kind without a resolver")
                    .isNull();
            assertThatThrownBy(() -> template.enqueue("invoice.sync", "not an invoice"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("concurrency key resolver reads")
                    .hasMessageContaining("set the key on the request");
            assertThatThrownBy(() -> template.enqueue("invoice.sync", new Invoice("a*", 5)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("concurrencyKey must not contain '*'");
        });
    }

    @Test
    void twoResolversForOneKindFailTheStartup() {
        runner.withBean(
                        "secondInvoiceKey",
                        ConcurrencyKeyResolver.class,
                        () -> ConcurrencyKeyResolver.of("invoice.sync", Invoice.class, i -> "x"))
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .hasMessageContaining("two concurrency key resolvers for kind invoice.sync");
                });
    }
}
