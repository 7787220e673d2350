package io.dbtasks.spring;

import io.dbtasks.DbTasks;
import io.micrometer.observation.ObservationRegistry;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * The {@link TaskTemplate} for application code, where one engine and one DataSource (or a primary
 * one) exist: the auto-configured engine or the application's own.
 */
@AutoConfiguration(after = DbTasksAutoConfiguration.class)
@ConditionalOnSingleCandidate(DataSource.class)
public class TaskTemplateAutoConfiguration {
    /**
     * The facade application code enqueues through: it joins the caller's Spring transaction on
     * the engine's DataSource, and propagates the trace context when tracing is on.
     *
     * @param dbTasks the engine
     * @param dataSource the DataSource the engine and the application share
     * @param properties for {@code dbtasks.tracing.enabled}
     * @param observations the observation registry, if any
     * @return the template
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(DbTasks.class)
    public TaskTemplate taskTemplate(
            DbTasks dbTasks,
            DataSource dataSource,
            ObjectProvider<DbTasksProperties> properties,
            ObjectProvider<ObservationRegistry> observations) {
        DbTasksProperties p = properties.getIfAvailable(DbTasksProperties::new);
        return new TaskTemplate(dbTasks, dataSource, DbTasksAutoConfiguration.observations(p, observations));
    }
}
