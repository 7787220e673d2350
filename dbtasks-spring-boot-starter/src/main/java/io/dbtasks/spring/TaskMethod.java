package io.dbtasks.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Allow-lists a public method of a Spring bean as a job target: a job definition ({@link
 * io.dbtasks.job.JobDefinitions}) may name it by the bean's name, the method's name and its declared
 * parameter types, and its JSON arguments are read as those types. A definition naming any other
 * method ends FAILED with a reason; nothing else is ever resolved. Methods of beans the application
 * does not own can be allow-listed with {@code dbtasks.jobs.allowed-methods} instead.
 *
 * <pre>{@code
 * @Service("orderTaskService")
 * class OrderTaskService {
 *     @TaskMethod("order.sync")
 *     public void syncOrder(Long orderId, String operator) { ... }
 * }
 * }</pre>
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface TaskMethod {
    /**
     * @return a label for the target, shown in the allow-list (logs, the server's targets endpoint);
     *     empty for none. Definitions name the bean and method, not the label.
     */
    String value() default "";
}
