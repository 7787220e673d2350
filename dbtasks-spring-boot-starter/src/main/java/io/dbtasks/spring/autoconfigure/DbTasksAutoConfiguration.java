package io.dbtasks.spring.autoconfigure;

import io.dbtasks.DbTasks;
import io.dbtasks.spring.DbTasksBuilderCustomizer;
import io.dbtasks.spring.DbTasksDataSource;
import io.dbtasks.spring.DuplicateKindException;
import io.dbtasks.spring.KindHandler;
import io.dbtasks.spring.RunOnce;
import io.dbtasks.spring.actuator.TaskObservations;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.json.JsonMapper;

/**
 * Auto-configures a {@link DbTasks} on the application's {@link DataSource} (the one marked {@link
 * DbTasksDataSource} if a bean is, else the single or primary one), configured by the {@code
 * dbtasks.*} properties ({@link DbTasksProperties}), with every {@link KindHandler} bean
 * registered under its kind, the application's {@link JsonMapper} (if it has exactly one) for
 * payloads, and a {@link DbTasksLifecycle} that starts and stops the workers with the context.
 *
 * <p>Backs off when the application defines its own {@code DbTasks} bean; the lifecycle then
 * manages that bean instead. Disabled by {@code dbtasks.enabled=false}.
 */
@AutoConfiguration(
        after = DataSourceAutoConfiguration.class,
        afterName = "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration")
@ConditionalOnClass(DbTasks.class)
@ConditionalOnBooleanProperty(name = "dbtasks.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DbTasksProperties.class)
public class DbTasksAutoConfiguration {

    /**
     * Builds the engine: migrates the schema (unless {@code dbtasks.migrate=false}) but does not start
     * the workers; {@link DbTasksLifecycle} does that once the context is refreshed.
     *
     * @param dbTasksDataSource the DataSource marked {@link DbTasksDataSource}, if a bean is
     * @param dataSource the application's single (or primary) DataSource, used when none is marked
     * @param properties the {@code dbtasks.*} properties
     * @param beanFactory to find the {@link KindHandler} beans with their names
     * @param jsonMapper the application's mapper, used if there is exactly one
     * @param customizers applied last, in order
     * @return the engine, not started
     * @throws DuplicateKindException if two handler beans claim one kind
     * @throws IllegalStateException if more than one DataSource bean is marked with {@link
     *     DbTasksDataSource}
     */
    @Bean
    @ConditionalOnMissingBean
    @Conditional(DbTasksDataSourceAvailable.class)
    public DbTasks dbTasks(
            @DbTasksDataSource ObjectProvider<DataSource> dbTasksDataSource,
            ObjectProvider<DataSource> dataSource,
            DbTasksProperties properties,
            ListableBeanFactory beanFactory,
            ObjectProvider<JsonMapper> jsonMapper,
            ObjectProvider<DbTasksBuilderCustomizer> customizers,
            ObjectProvider<io.micrometer.observation.ObservationRegistry> observations) {
        DbTasks.Builder builder = DbTasks.builder(dataSource(beanFactory, dbTasksDataSource, dataSource));
        applyProperties(builder, properties);
        jsonMapper.ifUnique(builder::jsonMapper);
        registerHandlers(builder, beanFactory, observations(properties, observations));
        RunOnceTargets.register(builder, beanFactory);
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.build();
    }

    /**
     * Proxies beans with {@link RunOnce} methods. Static, as a bean post-processor must be.
     *
     * @param dbTasks the engine, resolved at the first guarded call
     * @param environment resolves placeholders in {@code @Scheduled} and {@code @RunOnce}
     * @return the post-processor
     */
    @Bean
    @ConditionalOnMissingBean
    static RunOnceAdvisor dbTasksRunOnceAdvisor(ObjectProvider<DbTasks> dbTasks, Environment environment) {
        return new RunOnceAdvisor(new RunOnceInterceptor(dbTasks, environment, java.time.Clock.systemUTC()));
    }

    /**
     * The DataSource the engine stores its tasks in.
     *
     * @param beanFactory to name the marked DataSource beans in an error
     * @param marked the DataSources marked {@code @DbTasksDataSource}, if a bean is
     * @param any the application's single or primary DataSource
     * @return the marked one, else the single or primary one
     * @throws IllegalStateException if more than one DataSource bean is marked, one of them primary
     *     or not
     */
    static DataSource dataSource(
            ListableBeanFactory beanFactory, ObjectProvider<DataSource> marked, ObjectProvider<DataSource> any) {
        // All the marked candidates, not getIfAvailable(): that one picks a primary among several.
        List<DataSource> candidates = marked.stream().toList();
        if (candidates.size() > 1) {
            List<String> names = Arrays.stream(beanFactory.getBeanNamesForType(DataSource.class))
                    .filter(name -> beanFactory.findAnnotationOnBean(name, DbTasksDataSource.class) != null)
                    .toList();
            throw new IllegalStateException("more than one DataSource bean is marked @DbTasksDataSource: " + names
                    + "; mark only the one dbtasks stores its tasks in");
        }
        return candidates.isEmpty() ? any.getObject() : candidates.get(0);
    }

    static TaskObservations observations(
            DbTasksProperties properties, ObjectProvider<io.micrometer.observation.ObservationRegistry> registry) {
        if (!properties.getTracing().isEnabled()
                || !ClassUtils.isPresent("io.micrometer.observation.ObservationRegistry", null)) {
            return null;
        }
        io.micrometer.observation.ObservationRegistry r = registry.getIfUnique();
        return r == null || r.isNoop() ? null : new TaskObservations(r);
    }

    /**
     * @param dbTasks the context's engine, auto-configured or the application's own
     * @param properties for the shutdown timeout
     * @return the lifecycle that starts and stops its workers
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(DbTasks.class)
    public DbTasksLifecycle dbTasksLifecycle(DbTasks dbTasks, DbTasksProperties properties) {
        return new DbTasksLifecycle(dbTasks, properties.getShutdownTimeout());
    }

    private static void applyProperties(DbTasks.Builder builder, DbTasksProperties p) {
        p.getQueues().forEach(builder::queue);
        builder.workers(p.getWorkers().isEnabled())
                .lease(p.getLease())
                .pollInterval(p.getPollInterval())
                .enqueueSignalInterval(p.getEnqueueSignalInterval())
                .rescueInterval(p.getRescueInterval())
                .unclaimableGrace(p.getUnclaimableGrace())
                .shutdownTimeout(p.getShutdownTimeout())
                .claimBatch(p.getClaimBatch())
                .claimAhead(p.isClaimAhead())
                .defaultMaxAttempts(p.getDefaultMaxAttempts())
                .defaultTimeout(p.getDefaultTimeout())
                .statementTimeout(p.getStatementTimeout())
                .defaultRetryPolicy(p.getDefaultRetry().toPolicy())
                .migrate(p.isMigrate())
                .transactionPooling(p.getTransactionPooling());
        if (p.getHeartbeatInterval() != null) {
            builder.heartbeatInterval(p.getHeartbeatInterval());
        }
        if (p.getWorkerId() != null) {
            builder.workerId(p.getWorkerId());
        }
        DbTasksProperties.Retention r = p.getRetention();
        builder.retentionInterval(r.isEnabled() ? r.getInterval() : java.time.Duration.ZERO)
                .retention(io.dbtasks.TaskStatus.SUCCEEDED, r.getSucceeded())
                .retention(io.dbtasks.TaskStatus.FAILED, r.getFailed())
                .retention(io.dbtasks.TaskStatus.CANCELLED, r.getCancelled())
                .guardRetention(r.getGuards())
                .inboxRetention(r.getInbox());
        r.getQueues().forEach((queue, ages) -> {
            if (ages.getSucceeded() != null) {
                builder.retention(queue, io.dbtasks.TaskStatus.SUCCEEDED, ages.getSucceeded());
            }
            if (ages.getFailed() != null) {
                builder.retention(queue, io.dbtasks.TaskStatus.FAILED, ages.getFailed());
            }
            if (ages.getCancelled() != null) {
                builder.retention(queue, io.dbtasks.TaskStatus.CANCELLED, ages.getCancelled());
            }
        });
        DbTasksProperties.LongRunning l = p.getLongRunning();
        builder.longRunningThreshold(l.getThreshold());
        l.getQueues().forEach(builder::longRunningThresholdForQueue);
        l.getKinds().forEach(builder::longRunningThresholdForKind);
    }

    @SuppressWarnings("rawtypes")
    static void registerHandlers(
            DbTasks.Builder builder, ListableBeanFactory beanFactory, TaskObservations observations) {
        Map<String, KindHandler> beans = beanFactory.getBeansOfType(KindHandler.class);
        List<AnnotatedHandlers.Declared> annotated = AnnotatedHandlers.find(beanFactory);
        Map<String, List<String>> beansByKind = new LinkedHashMap<>();
        beans.forEach((name, handler) -> {
            String kind = handler.kind();
            if (kind == null || kind.isBlank() || handler.payloadType() == null) {
                throw new IllegalStateException("KindHandler bean '" + name + "' ("
                        + ClassUtils.getUserClass(handler).getName()
                        + ") must return a non-blank kind() and a non-null payloadType() (Void.class for none)");
            }
            beansByKind
                    .computeIfAbsent(kind, k -> new ArrayList<>())
                    .add("KindHandler bean '" + name + "' ("
                            + ClassUtils.getUserClass(handler).getName() + ")");
        });
        for (AnnotatedHandlers.Declared d : annotated) {
            beansByKind.computeIfAbsent(d.kind(), k -> new ArrayList<>()).add("@TaskListener " + d.description());
        }
        beansByKind.forEach((kind, names) -> {
            if (names.size() > 1) {
                throw new DuplicateKindException(kind, names);
            }
        });
        beans.values().forEach(h -> register(builder, (KindHandler<?>) h, observations));
        annotated.forEach(d -> AnnotatedHandlers.register(builder, d, observations));
    }

    private static <P> void register(DbTasks.Builder builder, KindHandler<P> handler, TaskObservations observations) {
        builder.handler(
                handler.kind(),
                handler.payloadType(),
                observations == null ? handler : observations.wrap(handler.kind(), handler));
    }
}
