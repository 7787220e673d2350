package io.dbtasks.spring.autoconfigure;

import io.dbtasks.DbTasks;
import io.dbtasks.once.PeriodKeys;
import io.dbtasks.once.RunOnceResult;
import io.dbtasks.spring.RunOnce;
import io.dbtasks.spring.RunOnceSkippedException;
import java.lang.reflect.Method;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;
import org.springframework.util.StringUtils;

/**
 * The advice behind {@link RunOnce}: computes the key of the call's period and runs the method
 * through {@link io.dbtasks.once.RunOnceGuards#runOnce}. Thread-safe.
 */
public class RunOnceInterceptor implements MethodInterceptor {
    private static final Logger log = LoggerFactory.getLogger(RunOnceInterceptor.class);
    /** A scheduler may fire a little before the slot's time by its own clock; this much early still counts. */
    static final Duration EARLY_FIRE = Duration.ofMillis(50);

    private static final ThreadLocal<String> CURRENT_KEY = new ThreadLocal<>();
    /** Set by a guard rescue around its call of the method: the key to run it under, unguarded. */
    private static final ThreadLocal<Rescue> RESCUE = new ThreadLocal<>();

    private record Rescue(Method method, String key) {}

    private final ObjectProvider<DbTasks> dbTasks;
    private final Environment environment;
    private final Clock clock;
    private final Map<Method, Plan> plans = new ConcurrentHashMap<>();

    /**
     * @param dbTasks the engine whose guards are used, resolved at the first call
     * @param environment resolves {@code ${...}} placeholders of {@code @Scheduled} attributes
     * @param clock the wall clock slots are read from
     */
    RunOnceInterceptor(ObjectProvider<DbTasks> dbTasks, Environment environment, Clock clock) {
        this.dbTasks = dbTasks;
        this.environment = environment;
        this.clock = clock;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Class<?> targetClass = invocation.getThis() != null
                ? AopUtils.getTargetClass(invocation.getThis())
                : method.getDeclaringClass();
        Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
        Rescue rescue = RESCUE.get();
        if (rescue != null && sameMethod(rescue.method(), specific)) {
            // The guard rescue holds the key's lease and calls the method through its proxy: run it
            // under the rescued key, not under the key of now.
            RESCUE.remove();
            return proceed(rescue.key(), invocation);
        }
        Plan plan = plans.computeIfAbsent(specific, m -> plan(m, targetClass));
        String key = plan.key(clock.instant());
        Object[] returned = new Object[1];
        Throwable[] thrown = new Throwable[1];
        String target = target(targetClass, specific);
        RunOnceResult result = dbTasks.getObject().guards().runOnce(key, target, plan.lease, lease -> {
            String outer = CURRENT_KEY.get();
            CURRENT_KEY.set(key);
            try {
                returned[0] = invocation.proceed();
            } catch (Exception e) {
                throw e;
            } catch (Throwable t) {
                thrown[0] = t;
                throw new java.lang.reflect.UndeclaredThrowableException(t);
            } finally {
                if (outer == null) {
                    CURRENT_KEY.remove();
                } else {
                    CURRENT_KEY.set(outer);
                }
            }
        });
        switch (result.outcome()) {
            case RAN, TOOK_OVER -> {
                return returned[0];
            }
            case FAILED -> {
                if (thrown[0] != null) {
                    throw thrown[0];
                }
                throw result.error();
            }
            case LEASE_LOST -> {
                log.warn(
                        "Run-once key '{}': the lease was taken over while the method ran; its result is discarded",
                        key);
                return null;
            }
            case SKIPPED_RUNNING, SKIPPED_FILTERED -> {
                return skipped(plan.annotation.ifRunning(), result);
            }
            case SKIPPED_DONE -> {
                return skipped(plan.annotation.ifDone(), result);
            }
            default -> throw new IllegalStateException("Unknown run-once outcome " + result.outcome());
        }
    }

    /**
     * The run-once key of the {@link RunOnce} method running on this thread, such as {@code
     * daily-report:2026-11-23T05:00:00Z}: the same when a live instance runs the key again after its
     * runner died. Use it for logging or for naming what the run produces after its period.
     *
     * @return the key, present while a guarded run (or a rescued one) of a {@link RunOnce} method is
     *     on this thread; empty elsewhere, including a call that was skipped
     */
    public static java.util.Optional<String> currentKey() {
        return java.util.Optional.ofNullable(CURRENT_KEY.get());
    }

    /**
     * The name under which {@code method} is registered as the run-once target that runs its keys
     * again when their runner died: its class's and its own name. Only methods without parameters
     * are targets, as a rescue has no arguments to pass.
     *
     * @return the name, or {@code null} if the method cannot be a target
     */
    static String target(Class<?> userClass, Method method) {
        if (method.getParameterCount() != 0) {
            return null;
        }
        String name = userClass.getName() + "." + method.getName();
        return name.length() <= io.dbtasks.once.RunOnceTarget.MAX_NAME ? name : null;
    }

    /**
     * The work that runs {@code method} of bean {@code beanName} again under a rescued key: calls the
     * method through the bean's proxy, which this interceptor lets through under the rescued key
     * (the rescue already holds the key's lease) with {@link #currentKey()} set to it.
     *
     * @param beanFactory where the bean is looked up, at the first rescue
     * @param beanName the bean
     * @param method the {@link RunOnce} method, without parameters
     * @return the work
     */
    static io.dbtasks.lock.LeasedWork rescueWork(
            org.springframework.beans.factory.BeanFactory beanFactory, String beanName, Method method) {
        return lease -> {
            Object bean = beanFactory.getBean(beanName);
            Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
            org.springframework.util.ReflectionUtils.makeAccessible(invocable);
            RESCUE.set(new Rescue(method, lease.name()));
            try {
                invocable.invoke(bean);
            } catch (java.lang.reflect.InvocationTargetException e) {
                if (e.getCause() instanceof Exception cause) {
                    throw cause;
                }
                if (e.getCause() instanceof Error error) {
                    throw error;
                }
                throw e;
            } finally {
                RESCUE.remove();
            }
        };
    }

    private static boolean sameMethod(Method a, Method b) {
        return a.getName().equals(b.getName()) && b.getParameterCount() == 0;
    }

    private static Object proceed(String key, MethodInvocation invocation) throws Throwable {
        String outer = CURRENT_KEY.get();
        CURRENT_KEY.set(key);
        try {
            return invocation.proceed();
        } finally {
            if (outer == null) {
                CURRENT_KEY.remove();
            } else {
                CURRENT_KEY.set(outer);
            }
        }
    }

    private static Object skipped(RunOnce.Skipped what, RunOnceResult result) {
        switch (what) {
            case THROW -> throw new RunOnceSkippedException(result);
            case LOG ->
                log.info(
                        "Run-once key '{}' skipped: {}{}",
                        result.key(),
                        result.outcome(),
                        result.holder().map(h -> " (held by " + h + ")").orElse(""));
            default -> log.debug("Run-once key '{}' skipped: {}", result.key(), result.outcome());
        }
        return null;
    }

    private Plan plan(Method method, Class<?> targetClass) {
        RunOnce annotation = AnnotatedElementUtils.findMergedAnnotation(method, RunOnce.class);
        if (annotation == null) {
            throw new IllegalStateException("No @RunOnce on " + method);
        }
        String name = StringUtils.hasText(annotation.key())
                ? annotation.key()
                : targetClass.getSimpleName() + "." + method.getName();
        Duration lease = DurationStyle.detectAndParse(environment.resolvePlaceholders(annotation.lease()));
        Scheduled scheduled = AnnotatedElementUtils.findMergedAnnotation(method, Scheduled.class);
        ZoneId zone = zone(annotation, scheduled);
        return new Plan(annotation, name, lease, slots(annotation, scheduled, zone, method), zone);
    }

    private ZoneId zone(RunOnce annotation, Scheduled scheduled) {
        String zone = annotation.zone();
        if (!StringUtils.hasText(zone) && scheduled != null) {
            zone = environment.resolvePlaceholders(scheduled.zone());
        }
        return StringUtils.hasText(zone) ? ZoneId.of(zone) : ZoneId.systemDefault();
    }

    private Slots slots(RunOnce annotation, Scheduled scheduled, ZoneId zone, Method method) {
        return switch (annotation.period()) {
            case NONE -> (name, at) -> name;
            case DAY -> (name, at) -> PeriodKeys.daily(name, at, zone);
            case HOUR -> (name, at) -> PeriodKeys.hourly(name, at, zone);
            case SCHEDULE -> scheduleSlots(scheduled, zone, method);
        };
    }

    private Slots scheduleSlots(Scheduled scheduled, ZoneId zone, Method method) {
        if (scheduled == null) {
            throw new IllegalStateException("@RunOnce on " + method + " has period SCHEDULE but no @Scheduled;"
                    + " annotate it with @Scheduled or choose period DAY, HOUR or NONE");
        }
        String cron = environment.resolvePlaceholders(scheduled.cron());
        if (StringUtils.hasText(cron) && !Scheduled.CRON_DISABLED.equals(cron)) {
            CronExpression expression = CronExpression.parse(cron);
            return (name, at) -> PeriodKeys.slot(name, lastFire(expression, at.plus(EARLY_FIRE), zone));
        }
        Duration period = period(scheduled.fixedRate(), scheduled.fixedRateString(), scheduled);
        if (period == null) {
            period = period(scheduled.fixedDelay(), scheduled.fixedDelayString(), scheduled);
        }
        if (period == null || period.isZero() || period.isNegative()) {
            throw new IllegalStateException("@RunOnce on " + method + " cannot tell the slot of its @Scheduled"
                    + " (no cron, fixedRate or fixedDelay); choose period DAY, HOUR or NONE");
        }
        Duration slot = period;
        return (name, at) -> PeriodKeys.every(name, at.plus(EARLY_FIRE), slot);
    }

    private Duration period(long value, String text, Scheduled scheduled) {
        if (value > 0) {
            return Duration.of(value, scheduled.timeUnit().toChronoUnit());
        }
        if (StringUtils.hasText(text)) {
            String resolved = environment.resolvePlaceholders(text);
            try {
                return Duration.of(
                        Long.parseLong(resolved), scheduled.timeUnit().toChronoUnit());
            } catch (NumberFormatException e) {
                return DurationStyle.detectAndParse(resolved);
            }
        }
        return null;
    }

    /**
     * The latest fire time of {@code cron} at or before {@code at}: looks back over growing windows
     * until one holds a fire time, then steps forward to the last one before {@code at}.
     */
    static Instant lastFire(CronExpression cron, Instant at, ZoneId zone) {
        ZonedDateTime end = at.atZone(zone);
        for (Duration back : new Duration[] {
            Duration.ofSeconds(1),
            Duration.ofMinutes(1),
            Duration.ofHours(1),
            Duration.ofDays(1),
            Duration.ofDays(32),
            Duration.ofDays(367),
            Duration.ofDays(366 * 8)
        }) {
            ZonedDateTime fire = cron.next(end.minus(back));
            if (fire != null && !fire.isAfter(end)) {
                ZonedDateTime next = cron.next(fire);
                while (next != null && !next.isAfter(end)) {
                    fire = next;
                    next = cron.next(fire);
                }
                return fire.toInstant();
            }
        }
        throw new IllegalStateException(
                "Cron expression " + cron + " has no fire time in the last 8 years before " + at);
    }

    @FunctionalInterface
    private interface Slots {
        String key(String name, Instant at);
    }

    private record Plan(RunOnce annotation, String name, Duration lease, Slots slots, ZoneId zone) {
        String key(Instant at) {
            return slots.key(name, at);
        }
    }
}
