package io.dbtasks.server.process;

import io.dbtasks.server.idempotency.IdempotencyConfig;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * For a server in a second JVM that a test will kill mid-request: with {@code
 * dbtasks.test.hold-responses=true}, a request under {@code /api} with {@code X-Test-Hold-Before: ms}
 * waits that long after the {@code Idempotency-Key} filter claimed its key and before the handler runs;
 * with {@code X-Test-Hold-After: ms}, after the handler ran and before the response is stored. Off
 * (and absent) in every other test.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty("dbtasks.test.hold-responses")
public class HeldResponses {
    @Bean
    FilterRegistrationBean<OncePerRequestFilter> heldResponsesFilter() {
        FilterRegistrationBean<OncePerRequestFilter> bean = new FilterRegistrationBean<>(new OncePerRequestFilter() {
            @Override
            protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                    throws ServletException, IOException {
                hold(request.getHeader("X-Test-Hold-Before"));
                chain.doFilter(request, response);
                hold(request.getHeader("X-Test-Hold-After"));
            }
        });
        bean.setOrder(IdempotencyConfig.ORDER + 1);
        bean.addUrlPatterns("/api/*");
        return bean;
    }

    private static void hold(String millis) {
        if (millis == null) {
            return;
        }
        try {
            Thread.sleep(Long.parseLong(millis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
