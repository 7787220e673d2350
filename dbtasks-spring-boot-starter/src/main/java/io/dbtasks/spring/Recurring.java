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
     * @return what a misfired schedule does with its due slots (after downtime, when the oldest due
     *     slot is later than {@link #misfireThreshold()}): {@code RUN_LATEST} (default) runs the
     *     latest, {@code SKIP} none, {@code RUN_EACH} the latest {@link #missedSlotsMax()}; see {@link
     *     io.dbtasks.schedule.MissedSlots}
     */
    Missed missedSlots() default Missed.RUN_LATEST;

    /**
     * @return for {@link Missed#RUN_EACH}, the most due slots a misfired schedule runs, the latest
     *     ones, 1 to {@value io.dbtasks.schedule.MissedSlots#MAX_RUN_EACH}; default 10. Not used by
     *     the other policies
     */
    int missedSlotsMax() default 10;

    /**
     * @return how late the oldest due slot may be found and the schedule still count as on time (each
     *     due slot runs), in Spring Boot's duration format ({@code 10s}, {@code 1m}); later, the
     *     schedule misfired and {@link #missedSlots()} decides. Default empty: {@link
     *     io.dbtasks.schedule.Schedule#DEFAULT_MISFIRE_THRESHOLD} (10 s); {@code ${...}} placeholders
     *     are resolved
     */
    String misfireThreshold() default "";

    /** Missed-slot policies; see {@link io.dbtasks.schedule.MissedSlots}. */
    enum Missed {
        /** Run none of a misfired schedule's due slots; go on from the next one. */
        SKIP,
        /** Run the latest of a misfired schedule's due slots, once ({@code MissedSlots.runLatest()}). */
        RUN_LATEST,
        /** Run each of the latest {@link Recurring#missedSlotsMax()} due slots ({@code MissedSlots.runEach(n)}). */
        RUN_EACH
    }
}
