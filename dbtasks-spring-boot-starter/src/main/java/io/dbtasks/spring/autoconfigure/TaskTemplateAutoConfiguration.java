package io.dbtasks.spring.autoconfigure;

import io.dbtasks.DbTasks;
import io.dbtasks.spring.DbTasksDataSource;
import io.dbtasks.spring.TaskTemplate;
import io.micrometer.observation.ObservationRegistry;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * The {@link TaskTemplate} for application code, where one engine exists (the auto-configured engine
 * or the application's own) and a DataSource for it: the one marked {@link DbTasksDataSource}, else the single or primary one.
 */
@AutoConfiguration(after = DbTasksAutoConfiguration.class)
@Conditional(DbTasksDataSourceAvailable.class)
public class TaskTemplateAutoConfiguration {
    /**
     * The facade application code enqueues through: it joins the caller's Spring transaction on
     * the engine's DataSource, and propagates the trace context when tracing is on.
     *
     * @param dbTasks the engine
     * @param dbTasksDataSource the DataSource marked {@code @DbTasksDataSource}, if a bean is
     * @param dataSource the application's single (or primary) DataSource, used when none is marked
     * @param beanFactory to name the marked DataSource beans in an error
     * @param properties for {@code dbtasks.tracing.enabled}
     * @param observations the observation registry, if any
     * @param keyResolvers the concurrency key resolvers, one per kind at most
     * @return the template
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(DbTasks.class)
    public TaskTemplate taskTemplate(
            DbTasks dbTasks,
            @DbTasksDataSource ObjectProvider<DataSource> dbTasksDataSource,
            ObjectProvider<DataSource> dataSource,
            ListableBeanFactory beanFactory,
            ObjectProvider<DbTasksProperties> properties,
            ObjectProvider<ObservationRegistry> observations,
            ObjectProvider<io.dbtasks.spring.ConcurrencyKeyResolver<?>> keyResolvers) {
        DbTasksProperties p = properties.getIfAvailable(DbTasksProperties::new);
        return new TaskTemplate(
                dbTasks,
                DbTasksAutoConfiguration.dataSource(beanFactory, dbTasksDataSource, dataSource),
                DbTasksAutoConfiguration.observations(p, observations),
                keyResolvers.orderedStream().toList());
    }
}
