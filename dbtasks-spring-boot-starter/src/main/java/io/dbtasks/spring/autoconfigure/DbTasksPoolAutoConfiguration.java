package io.dbtasks.spring.autoconfigure;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.util.DriverDataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Makes the application's HikariCP pool reconnect within a fraction of a second of its database's
 * return after an outage, instead of up to 5 s later (see {@link PromptReconnectDataSource}), so
 * that dbtasks' workers and enqueues resume as soon as the database does. It changes nothing while
 * the database is reachable. Applies to every {@link HikariDataSource} bean configured with a JDBC
 * URL (Spring Boot's own) that is not yet started; one given its own DataSource is left alone.
 * Disabled by {@code dbtasks.pool.prompt-reconnect=false}.
 */
@AutoConfiguration(before = DataSourceAutoConfiguration.class)
@ConditionalOnClass(HikariDataSource.class)
@ConditionalOnBooleanProperty(name = "dbtasks.pool.prompt-reconnect", matchIfMissing = true)
public class DbTasksPoolAutoConfiguration {

    /**
     * @return a post-processor that sets each not yet started {@link HikariDataSource} bean with a
     *     JDBC URL to open its connections through a {@link PromptReconnectDataSource}
     */
    @Bean
    static BeanPostProcessor dbTasksPromptReconnect() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessBeforeInitialization(Object bean, String beanName) {
                if (bean instanceof HikariDataSource pool
                        && pool.getDataSource() == null
                        && pool.getDataSourceClassName() == null
                        && pool.getJdbcUrl() != null
                        && pool.getHikariPoolMXBean() == null) {
                    DriverDataSource driver = new DriverDataSource(
                            pool.getJdbcUrl(),
                            pool.getDriverClassName(),
                            pool.getDataSourceProperties(),
                            pool.getUsername(),
                            pool.getPassword());
                    // Only once the pool runs: its first connection at start-up fails as fast as before.
                    pool.setDataSource(new PromptReconnectDataSource(
                            driver, () -> pool.getHikariPoolMXBean() != null && !pool.isClosed()));
                }
                return bean;
            }
        };
    }
}
