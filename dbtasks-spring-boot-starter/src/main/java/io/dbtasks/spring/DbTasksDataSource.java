package io.dbtasks.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.beans.factory.annotation.Qualifier;

/**
 * Marks the {@link javax.sql.DataSource} the auto-configured engine stores its tasks in, when it
 * should not be the application's primary (or only) one, as Spring Boot's {@code @QuartzDataSource}
 * and {@code @FlywayDataSource} do for theirs. The engine then migrates its schema, enqueues, claims
 * and settles on that DataSource only, and {@link TaskTemplate} joins the Spring transactions held on
 * it.
 *
 * <pre>{@code
 * @Bean
 * @DbTasksDataSource
 * DataSource tasksDataSource() { ... }
 * }</pre>
 *
 * <p>Without a bean so marked the engine uses the application's single DataSource, or its
 * {@code @Primary} one. At most one bean may carry it: two fail the startup. A bean that carries it
 * may be the application's only DataSource, or any of several, primary or not. The application's
 * own {@code DbTasks} bean, if it defines one, is built on whatever DataSource it is given.
 */
@Target({ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER, ElementType.TYPE, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Qualifier
public @interface DbTasksDataSource {}
