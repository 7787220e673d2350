package io.dbtasks.spring.autoconfigure;

import io.dbtasks.DbTasks;
import io.dbtasks.spring.RunOnce;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Registers every {@link RunOnce} method without parameters among the bean definitions as a run-once
 * target of the engine ({@link DbTasks.Builder#runOnceTarget}), so that a key of the method whose
 * runner died mid-run (its process killed, its machine lost) is run again by a live instance once
 * its lease has ended. Only these annotated methods are targets: a guard row's target name is looked
 * up among them, never resolved as a class or bean name. Used once, at startup.
 */
final class RunOnceTargets {
    private static final Logger log = LoggerFactory.getLogger(RunOnceTargets.class);

    private RunOnceTargets() {}

    static void register(DbTasks.Builder builder, ListableBeanFactory beanFactory) {
        Map<String, String> registeredBy = new HashMap<>();
        for (String beanName : beanFactory.getBeanDefinitionNames()) {
            Class<?> type = beanFactory.getType(beanName, false);
            if (type == null) {
                continue;
            }
            Class<?> userType = ClassUtils.getUserClass(type);
            Map<Method, RunOnce> methods =
                    MethodIntrospector.selectMethods(userType, (MethodIntrospector.MetadataLookup<RunOnce>)
                            m -> AnnotatedElementUtils.findMergedAnnotation(m, RunOnce.class));
            methods.forEach((method, annotation) -> {
                String target = RunOnceInterceptor.target(userType, method);
                if (target == null) {
                    log.info(
                            "@RunOnce method {}.{} takes parameters (or its name is over {} characters): a key of"
                                    + " it whose runner died is run again only when it is called again",
                            userType.getName(),
                            method.getName(),
                            io.dbtasks.once.RunOnceTarget.MAX_NAME);
                    return;
                }
                String earlier = registeredBy.putIfAbsent(target, beanName);
                if (earlier != null) {
                    log.warn(
                            "@RunOnce method {} is on beans '{}' and '{}'; a key whose runner died is run again on"
                                    + " bean '{}'",
                            target,
                            earlier,
                            beanName,
                            earlier);
                    return;
                }
                builder.runOnceTarget(
                        target,
                        lease(beanFactory, annotation, target),
                        RunOnceInterceptor.rescueWork(beanFactory, beanName, method));
            });
        }
    }

    private static Duration lease(ListableBeanFactory beanFactory, RunOnce annotation, String target) {
        String text = annotation.lease();
        if (beanFactory instanceof ConfigurableBeanFactory c) {
            String resolved = c.resolveEmbeddedValue(text);
            text = resolved == null ? text : resolved;
        }
        try {
            return DurationStyle.detectAndParse(text.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(
                    "@RunOnce " + target + " has lease '" + annotation.lease() + "', not a duration; write it as 30s,"
                            + " 10m or PT1H",
                    e);
        }
    }
}
