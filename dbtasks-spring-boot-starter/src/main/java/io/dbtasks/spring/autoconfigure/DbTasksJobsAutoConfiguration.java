package io.dbtasks.spring.autoconfigure;

import io.dbtasks.DbTasks;
import io.dbtasks.spring.DbTasksBuilderCustomizer;
import io.dbtasks.spring.TaskMethod;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import tools.jackson.databind.json.JsonMapper;

/**
 * Job definitions' targets: a {@link TaskMethodRegistrar} that allow-lists {@link TaskMethod}
 * methods and {@code dbtasks.jobs.allowed-methods}, handed to the auto-configured {@link DbTasks} as
 * its job target invoker. Disabled with the rest by {@code dbtasks.enabled=false}.
 */
@AutoConfiguration(before = DbTasksAutoConfiguration.class)
@ConditionalOnClass(DbTasks.class)
@ConditionalOnBooleanProperty(name = "dbtasks.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DbTasksJobsProperties.class)
public class DbTasksJobsAutoConfiguration {

    /**
     * The allow-list; static, as bean post-processors are created before other beans.
     *
     * @param mapper the application's mapper for the arguments, if it has exactly one
     * @param environment for {@code dbtasks.jobs.allowed-methods}
     * @return the registrar
     */
    @Bean
    @ConditionalOnMissingBean
    public static TaskMethodRegistrar dbTasksTaskMethodRegistrar(
            ObjectProvider<JsonMapper> mapper, Environment environment) {
        return new TaskMethodRegistrar(mapper, environment);
    }

    /**
     * @param registrar the allow-list
     * @return a customizer that makes it the engine's job target invoker
     */
    @Bean
    public DbTasksBuilderCustomizer dbTasksJobTargetsCustomizer(TaskMethodRegistrar registrar) {
        return builder -> builder.jobTargets(registrar);
    }
}
