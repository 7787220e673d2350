package io.dbtasks.spring.autoconfigure;

import io.dbtasks.spring.RunOnce;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;

/**
 * Proxies beans that have {@link RunOnce} methods with a {@link RunOnceInterceptor}. It runs before
 * Spring's {@code @Scheduled} processing, so the scheduler calls the method through the proxy.
 */
final class RunOnceAdvisor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
    /** @param interceptor the advice */
    RunOnceAdvisor(RunOnceInterceptor interceptor) {
        Pointcut pointcut = AnnotationMatchingPointcut.forMethodAnnotation(RunOnce.class);
        this.advisor = new AbstractPointcutAdvisor() {
            @Override
            public Pointcut getPointcut() {
                return pointcut;
            }

            @Override
            public org.aopalliance.aop.Advice getAdvice() {
                return interceptor;
            }
        };
        setBeforeExistingAdvisors(true);
        // Before ScheduledAnnotationBeanPostProcessor (lowest precedence), which keeps the bean it is given.
        setOrder(org.springframework.core.Ordered.LOWEST_PRECEDENCE - 100);
    }
}
