package io.dbtasks.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares the handler of a task kind on a Spring bean, found by the auto-configuration at startup.
 *
 * <p>On a <b>method</b> of any bean: the method runs each task of the kind. Its parameters are the
 * payload (at most one parameter of any type other than {@link io.dbtasks.TaskContext}, read from
 * the task's JSON with the application's mapper; none for a kind without payload) and, optionally,
 * the {@link io.dbtasks.TaskContext}, in any order. Its return value is ignored; what it throws fails
 * the attempt (and is retried as the task's retry policy says). The method is called through the
 * bean's proxy, so {@code @Transactional} and other advice on it apply.
 *
 * <pre>{@code
 * @Component
 * class Mailer {
 *     @TaskListener("mail.welcome")
 *     void send(WelcomeMail mail, TaskContext ctx) { ... }
 * }
 * }</pre>
 *
 * <p>On a <b>class</b> whose bean implements {@link io.dbtasks.TaskHandler}: the bean handles the
 * kind, its payload type is the type argument of {@code TaskHandler<P>} ({@code Void} if raw).
 *
 * <p>The bean is looked up when its first task runs, not when the engine is built, so handler beans
 * may inject {@code DbTasks} or {@link TaskTemplate} directly. Two declarations of one kind (by this
 * annotation or by {@link KindHandler} beans) fail the startup with a {@link DuplicateKindException}.
 * Handlers run on worker threads, possibly many at once: they must be thread-safe.
 *
 * <p>Retries are not declared here. The engine keeps them per task, fixed when it is enqueued (a
 * retry or a rescue keeps them): set them on the request with {@link
 * io.dbtasks.TaskRequest.Builder#maxAttempts(int)} and {@link
 * io.dbtasks.TaskRequest.Builder#retryPolicy(io.dbtasks.RetryPolicy)} (fixed or exponential backoff
 * with a cap and jitter); a request that does not say gets the engine's defaults, {@code
 * dbtasks.default-max-attempts} and {@code dbtasks.default-retry.*}. The engine has no defaults per
 * kind for this annotation to set. A handler that knows a failure is permanent throws {@link
 * io.dbtasks.NonRetryableException}, which fails the task at once.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface TaskListener {
    /**
     * @return the stable kind name tasks are enqueued under, for example {@code "order.sync"}; not
     *     blank
     */
    String value();
}
