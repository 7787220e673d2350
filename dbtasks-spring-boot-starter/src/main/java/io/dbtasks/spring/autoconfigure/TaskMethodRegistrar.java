package io.dbtasks.spring.autoconfigure;

import io.dbtasks.job.JobInvocation;
import io.dbtasks.job.JobMethodRegistry;
import io.dbtasks.job.JobTarget;
import io.dbtasks.job.JobTargetInvoker;
import io.dbtasks.spring.TaskMethod;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import tools.jackson.databind.json.JsonMapper;

/**
 * Builds the job targets' allow-list at startup and invokes job definitions through it. As a bean
 * post-processor it finds the {@link TaskMethod} methods of every bean as the bean is created (as
 * Spring's {@code @Scheduled} processing does); once all singletons exist it adds the methods listed
 * in {@code dbtasks.jobs.allowed-methods}, looked up on the named beans by name and declared
 * parameter type names. Stored definitions are only ever compared with this list: no class, bean or
 * method is resolved from their text.
 *
 * <p>Thread-safe.
 */
public class TaskMethodRegistrar
        implements BeanPostProcessor, SmartInitializingSingleton, BeanFactoryAware, JobTargetInvoker {
    /** What a "not allow-listed" failure tells the operator to do. */
    static final String HINT = "annotate the method with @io.dbtasks.spring.TaskMethod, or list it in"
            + " dbtasks.jobs.allowed-methods as bean.method(parameter types).";

    private static final Logger log = LoggerFactory.getLogger(TaskMethodRegistrar.class);

    private record Found(String beanName, Object bean, Method method, String label) {}

    private final ObjectProvider<JsonMapper> mapper;
    private final Environment environment;
    private final List<Found> pending = new ArrayList<>();
    private volatile JobMethodRegistry registry;
    private BeanFactory beanFactory;

    /**
     * @param mapper the application's mapper, used for arguments if it has exactly one
     * @param environment where {@code dbtasks.jobs.allowed-methods} is read from
     */
    public TaskMethodRegistrar(ObjectProvider<JsonMapper> mapper, Environment environment) {
        this.mapper = mapper;
        this.environment = environment;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
        this.beanFactory = beanFactory;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (!org.springframework.core.annotation.AnnotationUtils.isCandidateClass(type, TaskMethod.class)) {
            return bean;
        }
        Map<Method, TaskMethod> annotated =
                MethodIntrospector.selectMethods(type, (MethodIntrospector.MetadataLookup<TaskMethod>)
                        m -> AnnotatedElementUtils.findMergedAnnotation(m, TaskMethod.class));
        annotated.forEach((method, annotation) -> {
            if (!Modifier.isPublic(method.getModifiers()) || Modifier.isStatic(method.getModifiers())) {
                throw new IllegalStateException("@TaskMethod " + method.toGenericString() + " of bean '" + beanName
                        + "' must be a public instance method");
            }
            add(new Found(beanName, bean, AopUtils.selectInvocableMethod(method, bean.getClass()), annotation.value()));
        });
        return bean;
    }

    private synchronized void add(Found f) {
        JobMethodRegistry r = registry;
        if (r == null) {
            pending.add(f);
        } else {
            register(r, f);
        }
    }

    @Override
    public synchronized void afterSingletonsInstantiated() {
        JobMethodRegistry r = new JobMethodRegistry(
                mapper.getIfUnique(() -> JsonMapper.builder().build()), "To allow-list it, " + HINT);
        pending.forEach(f -> register(r, f));
        pending.clear();
        List<String> configured = Binder.get(environment)
                .bind(
                        "dbtasks.jobs.allowed-methods",
                        org.springframework.boot.context.properties.bind.Bindable.listOf(String.class))
                .orElse(List.of());
        for (String entry : configured) {
            configure(r, entry.strip());
        }
        registry = r;
        log.info("dbtasks job targets allow-listed: {}", r.allowed());
    }

    /** Adds the methods one configuration entry names; fails the startup if it names none. */
    private void configure(JobMethodRegistry r, String entry) {
        int paren = entry.indexOf('(');
        String head = paren < 0 ? entry : entry.substring(0, paren);
        int dot = head.lastIndexOf('.');
        if (dot <= 0 || dot == head.length() - 1 || (paren >= 0 && !entry.endsWith(")"))) {
            throw new IllegalStateException("dbtasks.jobs.allowed-methods entry '" + entry
                    + "' must read bean.method or bean.method(type, ...), for example"
                    + " orderService.syncOrder(java.lang.Long, java.lang.String)");
        }
        String beanName = head.substring(0, dot);
        String methodName = head.substring(dot + 1);
        List<String> types = paren < 0
                ? null
                : Arrays.stream(entry.substring(paren + 1, entry.length() - 1).split(","))
                        .map(String::strip)
                        .filter(s -> !s.isEmpty())
                        .toList();
        if (!beanFactory.containsBean(beanName)) {
            throw new IllegalStateException("dbtasks.jobs.allowed-methods entry '" + entry + "' names bean '" + beanName
                    + "', which does not exist");
        }
        Object bean = beanFactory.getBean(beanName);
        int added = 0;
        for (Method m : AopUtils.getTargetClass(bean).getMethods()) {
            if (!m.getName().equals(methodName)
                    || Modifier.isStatic(m.getModifiers())
                    || m.getDeclaringClass() == Object.class) {
                continue;
            }
            List<String> declared =
                    Arrays.stream(m.getParameterTypes()).map(Class::getTypeName).toList();
            if (types != null && !types.equals(declared)) {
                continue;
            }
            JobTarget target = new JobTarget(beanName, methodName, declared);
            if (!r.isAllowed(target)) {
                r.register(beanName, bean, AopUtils.selectInvocableMethod(m, bean.getClass()));
            }
            added++;
        }
        if (added == 0) {
            throw new IllegalStateException(
                    "dbtasks.jobs.allowed-methods entry '" + entry + "' matches no public method of bean '" + beanName
                            + "' (" + AopUtils.getTargetClass(bean).getName() + ")");
        }
    }

    private static void register(JobMethodRegistry r, Found f) {
        r.register(f.beanName(), f.bean(), f.method());
        if (!f.label().isEmpty()) {
            log.debug(
                    "@TaskMethod(\"{}\") {}.{}",
                    f.label(),
                    f.beanName(),
                    f.method().getName());
        }
    }

    /** @return the allow-listed targets as {@code bean.method(type, ...)}, sorted; empty before startup ends */
    public List<String> allowed() {
        JobMethodRegistry r = registry;
        return r == null ? List.of() : r.allowed();
    }

    /**
     * {@inheritDoc}
     *
     * <p>None before startup ends: job runs wait for the allow-list instead of failing.
     */
    @Override
    public java.util.Optional<java.util.Set<String>> allowListedTargets() {
        JobMethodRegistry r = registry;
        return r == null ? java.util.Optional.of(java.util.Set.of()) : r.allowListedTargets();
    }

    @Override
    public void invoke(JobInvocation invocation) throws Exception {
        JobMethodRegistry r = registry;
        if (r == null) {
            throw new IllegalStateException(
                    "The job allow-list is not built yet (the application is still starting);" + " the job is retried");
        }
        r.invoke(invocation);
    }
}
