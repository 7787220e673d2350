package io.dbtasks.spring.autoconfigure;

import io.dbtasks.DbTasks;
import io.dbtasks.spring.DbTasksBuilderCustomizer;
import io.dbtasks.spring.actuator.DbTasksEndpoint;
import io.dbtasks.spring.actuator.DbTasksHealthIndicator;
import io.dbtasks.spring.actuator.DbTasksMetrics;
import io.dbtasks.spring.actuator.DbTasksQueueGauges;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Actuator and Micrometer support for the {@link DbTasks} bean, each part only where its library is
 * on the class path: the {@code dbtasks} health indicator ({@code spring-boot-health}), the {@code
 * /actuator/dbtasks} endpoint ({@code spring-boot-actuator}), and the meters of {@link
 * DbTasksMetrics} and {@link DbTasksQueueGauges} (Micrometer with a {@code MeterRegistry} bean).
 */
@AutoConfiguration(
        after = DbTasksAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration"
        })
@ConditionalOnBooleanProperty(name = "dbtasks.enabled", matchIfMissing = true)
public class DbTasksObservabilityAutoConfiguration {

    /** The health indicator, where Spring Boot's health support is present. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnEnabledHealthIndicator("dbtasks")
    @ConditionalOnSingleCandidate(DbTasks.class)
    static class Health {
        /**
         * @param dbTasks the engine
         * @param properties the stall limits
         * @return the indicator, named {@code dbtasks}
         */
        @Bean
        @ConditionalOnMissingBean(name = "dbtasksHealthIndicator")
        DbTasksHealthIndicator dbtasksHealthIndicator(DbTasks dbTasks, DbTasksProperties properties) {
            DbTasksProperties.Health limits = properties.getHealth();
            return new DbTasksHealthIndicator(
                    dbTasks, limits.getClaimLoopStall(), limits.getRescueStall(), java.time.Clock.systemUTC());
        }
    }

    /** The {@code /actuator/dbtasks} endpoint, where Actuator is present and the endpoint exposed. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Endpoint.class)
    @ConditionalOnAvailableEndpoint(DbTasksEndpoint.class)
    @ConditionalOnSingleCandidate(DbTasks.class)
    static class Actuator {
        /**
         * @param dbTasks the engine
         * @return the endpoint
         */
        @Bean
        @ConditionalOnMissingBean
        DbTasksEndpoint dbTasksEndpoint(DbTasks dbTasks) {
            return new DbTasksEndpoint(dbTasks);
        }
    }

    /** Meters, where Micrometer is present with a registry and {@code dbtasks.metrics.enabled} is not false. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnBooleanProperty(name = "dbtasks.metrics.enabled", matchIfMissing = true)
    static class Metrics {
        /**
         * Adds the metrics event listener to the auto-configured engine's builder.
         *
         * @param registry the meter registry
         * @param properties for the timer percentiles
         * @return the customizer
         */
        @Bean
        DbTasksBuilderCustomizer dbTasksMetricsCustomizer(MeterRegistry registry, DbTasksProperties properties) {
            double[] percentiles = properties.getMetrics().getPercentiles();
            return builder -> builder.listener(new DbTasksMetrics(registry, percentiles));
        }

        /**
         * @param dbTasks the engine
         * @param registry the meter registry
         * @param properties for the refresh interval
         * @return the queue gauges, refreshed while the context runs
         */
        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnSingleCandidate(DbTasks.class)
        DbTasksQueueGauges dbTasksQueueGauges(DbTasks dbTasks, MeterRegistry registry, DbTasksProperties properties) {
            return new DbTasksQueueGauges(
                    dbTasks, registry, properties.getMetrics().getGaugeInterval());
        }
    }
}
