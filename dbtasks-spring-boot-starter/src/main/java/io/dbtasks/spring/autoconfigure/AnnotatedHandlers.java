package io.dbtasks.spring.autoconfigure;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskContext;
import io.dbtasks.spring.Recurring;
import io.dbtasks.spring.TaskListener;
import io.dbtasks.spring.actuator.TaskObservations;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Finds {@link TaskListener @TaskListener} declarations among the bean definitions and turns them into
 * engine handlers that resolve their bean on first use. Used once, at startup.
 */
final class AnnotatedHandlers {
    private AnnotatedHandlers() {}

    /**
     * One declared handler: its kind, payload type, a description for errors, the handler, and the
     * schedule that enqueues its tasks ({@link Recurring}) or {@code null}.
     */
    record Declared(
            String kind,
            Class<?> payloadType,
            String description,
            io.dbtasks.TaskHandler<?> handler,
            io.dbtasks.schedule.Schedule schedule) {
        Declared(String kind, Class<?> payloadType, String description, io.dbtasks.TaskHandler<?> handler) {
            this(kind, payloadType, description, handler, null);
        }
    }

    static List<Declared> find(ListableBeanFactory beanFactory) {
        List<Declared> found = new ArrayList<>();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            Class<?> type = beanFactory.getType(name, false);
            if (type == null) {
                continue;
            }
            Class<?> userType = ClassUtils.getUserClass(type);
            TaskListener onType = AnnotatedElementUtils.findMergedAnnotation(userType, TaskListener.class);
            if (onType != null) {
                found.add(forBean(beanFactory, name, userType, onType));
            }
            Map<Method, TaskListener> methods =
                    MethodIntrospector.selectMethods(userType, (MethodIntrospector.MetadataLookup<TaskListener>)
                            m -> AnnotatedElementUtils.findMergedAnnotation(m, TaskListener.class));
            methods.forEach((method, annotation) -> found.add(forMethod(beanFactory, name, method, annotation)));
            Map<Method, Recurring> recurring =
                    MethodIntrospector.selectMethods(userType, (MethodIntrospector.MetadataLookup<Recurring>)
                            m -> AnnotatedElementUtils.findMergedAnnotation(m, Recurring.class));
            recurring.forEach(
                    (method, annotation) -> found.add(forRecurring(beanFactory, name, userType, method, annotation)));
        }
        return found;
    }

    private static Declared forBean(BeanFactory beanFactory, String name, Class<?> type, TaskListener annotation) {
        String kind = kind(annotation, "bean '" + name + "' (" + type.getName() + ")");
        if (!io.dbtasks.TaskHandler.class.isAssignableFrom(type)) {
            throw new IllegalStateException("@TaskListener(\"" + kind + "\") on class " + type.getName()
                    + " needs the class to implement io.dbtasks.TaskHandler<P>; or put the annotation on a method");
        }
        Class<?> payload = ResolvableType.forClass(type)
                .as(io.dbtasks.TaskHandler.class)
                .getGeneric(0)
                .resolve(Void.class);
        String description = "bean '" + name + "' (" + type.getName() + ")";
        return new Declared(kind, payload, description, new LazyBeanHandler(beanFactory, name));
    }

    private static Declared forMethod(BeanFactory beanFactory, String name, Method method, TaskListener annotation) {
        String description =
                "bean '" + name + "' method " + method.getDeclaringClass().getName() + "." + method.getName();
        String kind = kind(annotation, description);
        Class<?>[] params = method.getParameterTypes();
        int payloadIndex = -1;
        for (int i = 0; i < params.length; i++) {
            if (params[i] == TaskContext.class) {
                continue;
            }
            if (payloadIndex >= 0) {
                throw new IllegalStateException("@TaskListener(\"" + kind + "\") " + description
                        + " has more than one payload parameter; take one payload and, optionally, a TaskContext");
            }
            payloadIndex = i;
        }
        Class<?> payload = payloadIndex < 0 ? Void.class : ClassUtils.resolvePrimitiveIfNecessary(params[payloadIndex]);
        return new Declared(
                kind, payload, description, new MethodHandler(beanFactory, name, method, payloadIndex, params.length));
    }

    private static Declared forRecurring(
            BeanFactory beanFactory, String name, Class<?> type, Method method, Recurring annotation) {
        String description =
                "bean '" + name + "' method " + method.getDeclaringClass().getName() + "." + method.getName();
        for (Class<?> p : method.getParameterTypes()) {
            if (p != TaskContext.class) {
                throw new IllegalStateException("@Recurring " + description
                        + " may take only a TaskContext parameter (its tasks have no payload)");
            }
        }
        String kind = annotation.name().isBlank()
                ? type.getSimpleName() + "." + method.getName()
                : resolve(beanFactory, annotation.name());
        String cron = resolve(beanFactory, annotation.cron());
        String rate = resolve(beanFactory, annotation.fixedRate());
        if (cron.isBlank() == rate.isBlank()) {
            throw new IllegalStateException("@Recurring " + description + " needs exactly one of cron and fixedRate");
        }
        io.dbtasks.schedule.Trigger trigger = cron.isBlank()
                ? io.dbtasks.schedule.Trigger.fixedRate(
                        org.springframework.boot.convert.DurationStyle.detectAndParse(rate))
                : io.dbtasks.schedule.Trigger.cron(cron, java.time.ZoneId.of(resolve(beanFactory, annotation.zone())));
        io.dbtasks.schedule.Schedule.Builder schedule = io.dbtasks.schedule.Schedule.builder(kind, trigger)
                .task(kind)
                .missedSlots(missedSlots(annotation, description));
        String threshold = resolve(beanFactory, annotation.misfireThreshold());
        if (!threshold.isBlank()) {
            try {
                schedule.misfireThreshold(org.springframework.boot.convert.DurationStyle.detectAndParse(threshold));
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException(
                        "@Recurring " + description + " has misfireThreshold '" + threshold
                                + "'; write a duration that is zero or more, such as 10s or 2m",
                        e);
            }
        }
        String queue = resolve(beanFactory, annotation.queue());
        if (!queue.isBlank()) {
            schedule.queue(queue);
        }
        int arity = method.getParameterCount();
        return new Declared(
                kind,
                Void.class,
                description,
                new MethodHandler(beanFactory, name, method, -1, arity),
                schedule.build());
    }

    private static io.dbtasks.schedule.MissedSlots missedSlots(Recurring annotation, String description) {
        return switch (annotation.missedSlots()) {
            case SKIP -> io.dbtasks.schedule.MissedSlots.skip();
            case RUN_LATEST -> io.dbtasks.schedule.MissedSlots.runLatest();
            case RUN_EACH -> {
                try {
                    yield io.dbtasks.schedule.MissedSlots.runEach(annotation.missedSlotsMax());
                } catch (io.dbtasks.schedule.InvalidScheduleException e) {
                    throw new IllegalStateException("@Recurring " + description + ": " + e.getMessage(), e);
                }
            }
        };
    }

    private static String resolve(BeanFactory beanFactory, String value) {
        if (beanFactory instanceof org.springframework.beans.factory.config.ConfigurableBeanFactory c) {
            String resolved = c.resolveEmbeddedValue(value);
            return resolved == null ? "" : resolved.trim();
        }
        return value.trim();
    }

    private static String kind(TaskListener annotation, String where) {
        String kind = annotation.value();
        if (kind == null || kind.isBlank()) {
            throw new IllegalStateException(
                    "@TaskListener on " + where + " must name a kind, e.g. @TaskListener(\"order.sync\")");
        }
        return kind;
    }

    @SuppressWarnings("unchecked")
    static <P> void register(DbTasks.Builder builder, Declared declared, TaskObservations observations) {
        io.dbtasks.TaskHandler<P> handler = (io.dbtasks.TaskHandler<P>) declared.handler();
        builder.handler(
                declared.kind(),
                (Class<P>) declared.payloadType(),
                observations == null ? handler : observations.wrap(declared.kind(), handler));
        if (declared.schedule() != null) {
            builder.schedule(declared.schedule());
        }
    }

    /** A handler bean resolved when its first task runs. */
    private static final class LazyBeanHandler implements io.dbtasks.TaskHandler<Object> {
        private final BeanFactory beanFactory;
        private final String name;
        private volatile io.dbtasks.TaskHandler<Object> bean;

        LazyBeanHandler(BeanFactory beanFactory, String name) {
            this.beanFactory = beanFactory;
            this.name = name;
        }

        @Override
        @SuppressWarnings("unchecked")
        public void handle(TaskContext context, Object payload) throws Exception {
            io.dbtasks.TaskHandler<Object> h = bean;
            if (h == null) {
                h = (io.dbtasks.TaskHandler<Object>) beanFactory.getBean(name);
                bean = h;
            }
            h.handle(context, payload);
        }
    }

    /** Calls an annotated method on its bean (through the bean's proxy). */
    private static final class MethodHandler implements io.dbtasks.TaskHandler<Object> {
        private final BeanFactory beanFactory;
        private final String name;
        private final Method method;
        private final int payloadIndex;
        private final int arity;
        private volatile Object bean;
        private volatile Method invocable;

        MethodHandler(BeanFactory beanFactory, String name, Method method, int payloadIndex, int arity) {
            this.beanFactory = beanFactory;
            this.name = name;
            this.method = method;
            this.payloadIndex = payloadIndex;
            this.arity = arity;
        }

        @Override
        public void handle(TaskContext context, Object payload) throws Exception {
            Object target = bean;
            if (target == null) {
                target = beanFactory.getBean(name);
                Method m = AopUtils.selectInvocableMethod(method, target.getClass());
                ReflectionUtils.makeAccessible(m);
                invocable = m;
                bean = target;
            }
            Object[] args = new Object[arity];
            for (int i = 0; i < arity; i++) {
                args[i] = i == payloadIndex ? payload : context;
            }
            try {
                invocable.invoke(target, args);
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof Exception ex) {
                    throw ex;
                }
                if (cause instanceof Error err) {
                    throw err;
                }
                throw e;
            }
        }

        @Override
        public String toString() {
            return "@TaskListener " + method;
        }
    }
}
