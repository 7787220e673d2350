package io.dbtasks.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares a recurring schedule whose slots run this bean method as tasks, cluster-wide: each slot
 * becomes exactly one task (the schedule's slot key is its idempotency key), which any instance's
 * workers run with retries, leases and the rest of the task machinery. Unlike {@code @Scheduled}
 * (which fires on every instance), it needs no {@link RunOnce}. Built on {@link
 * io.dbtasks.schedule.Schedule}: the auto-configuration registers the method as the handler of kind
 * {@link #name()} and declares the schedule on the engine, which saves it at start.
 *
 * <pre>{@code
 * @Recurring(cron = "0 0 6 * * *", zone = "Europe/Berlin")
 * void morningDigest(TaskContext ctx) { ... }
 * }</pre>
 *
 * <p>The method takes no parameters or only a {@link io.dbtasks.TaskContext}; its return value is
 * ignored and what it throws fails the attempt. Exactly one of {@link #cron()} and {@link
 * #fixedRate()} is given.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Recurring {
    /**
     * @return a cron expression in Spring's six-field syntax (seconds first), e.g. {@code "0 0 6 * *
     *     *"}; {@code ${...}} placeholders are resolved
     */
    String cron() default "";

    /** @return the zone of the cron expression's times; default UTC */
    String zone() default "UTC";

    /**
     * @return a fixed rate instead of a cron, in Spring Boot's duration format ({@code 30s}, {@code
     *     5m}); slots every this long from the schedule's start
     */
    String fixedRate() default "";

    /**
     * @return the schedule's name, also the kind of its tasks; default {@code SimpleClassName.method}
     */
    String name() default "";

    /** @return the queue its tasks go to; default the default queue */
    String queue() default "";

    /**
     * @return what to do with slots missed while no engine ran: {@code RUN_LATEST} (default) or {@code
     *     SKIP}
     */
    Missed missedSlots() default Missed.RUN_LATEST;

    /** Missed-slot policies; see {@link io.dbtasks.schedule.MissedSlots}. */
    enum Missed {
        /** Skip missed slots; run from the next one. */
        SKIP,
        /** Run the latest missed slot once. */
        RUN_LATEST
    }
}
