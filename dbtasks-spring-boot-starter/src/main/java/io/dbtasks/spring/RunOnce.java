package io.dbtasks.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a bean method at most once per key and period across every instance of the application,
 * typically a {@code @Scheduled} method that every instance fires.
 * Built on the run-once guards ({@link io.dbtasks.once.RunOnceGuards}): the first instance to call
 * for a key runs the method under a lease; the others skip it while it runs and after it succeeded;
 * a failed run is run again by the next call; a run whose process died is taken over once its lease
 * has ended, by the next call of its key or, for a method without parameters, by the engine of a live
 * instance, which calls the method again under the same key (so a slot whose runner died is not lost
 * although no instance fires that slot again; see {@link io.dbtasks.once.RunOnceTarget}).
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 6 * * *", zone = "Europe/Berlin")
 * @RunOnce(key = "daily-report")          // key daily-report:2026-11-23T05:00:00Z, once per cron slot
 * void dailyReport() { ... }
 *
 * @Scheduled(fixedRate = 1000)
 * @RunOnce                                  // once per 1 s slot of the epoch, whichever instance fires first
 * void tick() { ... }
 * }</pre>
 *
 * <p>The key is {@link #key()} (default {@code SimpleClassName.method}), a colon and the period: see
 * {@link Period}. With {@link Period#SCHEDULE} (the default) the period is the slot of the method's
 * own {@code @Scheduled}: the latest cron fire time at or before the call, in the trigger's zone, or
 * the call time rounded down to a multiple of {@code fixedRate} (or {@code fixedDelay}) since the
 * epoch. Slots are computed on each instance's wall clock: keep the clocks in sync (NTP), as
 * {@code @Scheduled} itself needs.
 *
 * <p>What the call returns: the method's return value when it ran; {@code null} when it was skipped
 * (so use it on {@code void} methods or handle {@code null}). A run that throws is recorded FAILED and
 * its exception is rethrown to the caller (the scheduler logs it). Only calls through the bean's
 * proxy are guarded, as with any Spring advice.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RunOnce {
    /**
     * @return the key's name part; default {@code SimpleClassName.methodName}. The period is
     *     appended after a colon; at most 200 characters in all are advisable (the key column holds
     *     255)
     */
    String key() default "";

    /** @return what the period part of the key is; default the slot of the method's {@code @Scheduled} */
    Period period() default Period.SCHEDULE;

    /**
     * @return the zone of {@link Period#DAY} and {@link Period#HOUR} boundaries; default the {@code
     *     @Scheduled} zone if it names one, else the JVM's default zone
     */
    String zone() default "";

    /**
     * @return how long the run may go without a lease renewal before another instance may take the
     *     key over, in Spring Boot's duration format ({@code 30s}, {@code 10m}, {@code PT1H}); the
     *     lease is renewed every third of it while the method runs. Default 5 minutes
     */
    String lease() default "5m";

    /** @return what a call does when another instance is running the key now; default {@link Skipped#IGNORE} */
    Skipped ifRunning() default Skipped.IGNORE;

    /** @return what a call does when the key has already succeeded; default {@link Skipped#IGNORE} */
    Skipped ifDone() default Skipped.IGNORE;

    /** The period part of the key. */
    enum Period {
        /** The slot of the method's {@code @Scheduled} (cron fire time, or fixed-rate slot); see above. */
        SCHEDULE,
        /** The calendar day in the zone: {@code key:2026-11-23}. */
        DAY,
        /** The clock hour in the zone: {@code key:2026-11-23T14}. */
        HOUR,
        /** No period: the method succeeds once, ever (until the guard row is deleted by retention). */
        NONE
    }

    /** What a skipped call does. */
    enum Skipped {
        /** Return {@code null}; logged at DEBUG. */
        IGNORE,
        /** Return {@code null}; logged at INFO with the key and the holder. */
        LOG,
        /** Throw {@link RunOnceSkippedException}. */
        THROW
    }
}
