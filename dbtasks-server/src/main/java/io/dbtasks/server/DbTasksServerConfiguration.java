package io.dbtasks.server;

import org.springframework.boot.autoconfigure.AutoConfigurationExcludeFilter;
import org.springframework.boot.context.TypeExcludeFilter;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.FilterType;

/**
 * The server's beans for an application that embeds it: the REST API, dashboard, security, audit
 * log and idempotency filter over the application's own {@code DbTasks} engine, task kinds and job
 * targets. Import it from the application's {@code @SpringBootApplication}:
 *
 * <pre>{@code
 * @SpringBootApplication
 * @Import(DbTasksServerConfiguration.class)
 * class ShopApplication { ... }
 * }</pre>
 *
 * <p>The demo (the sample order kinds, job targets, sample jobs and batch) stays out unless {@code
 * dbtasks.server.demo.enabled=true}. {@link DbTasksServerApplication}, the standalone server, is not
 * part of it.
 */
@Configuration(proxyBeanMethods = false)
@ComponentScan(
        basePackageClasses = DbTasksServerConfiguration.class,
        excludeFilters = {
            @ComponentScan.Filter(type = FilterType.CUSTOM, classes = TypeExcludeFilter.class),
            @ComponentScan.Filter(type = FilterType.CUSTOM, classes = AutoConfigurationExcludeFilter.class),
            @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE, classes = DbTasksServerApplication.class)
        })
public class DbTasksServerConfiguration {}
