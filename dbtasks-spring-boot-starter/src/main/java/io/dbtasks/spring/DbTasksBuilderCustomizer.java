package io.dbtasks.spring;

import io.dbtasks.DbTasks;

/**
 * Adjusts the {@link DbTasks.Builder} of the auto-configured engine after the {@code dbtasks.*}
 * properties and the {@link KindHandler} beans have been applied, and before {@code build()}. Use it
 * for what properties cannot say: an executor, non-retryable exception types, extra handlers.
 * Customizer beans are applied in {@link org.springframework.core.annotation.Order} order.
 */
@FunctionalInterface
public interface DbTasksBuilderCustomizer {
    /**
     * @param builder the builder about to be built; never {@code null}, called on the thread that
     *     creates the bean
     */
    void customize(DbTasks.Builder builder);
}
