package io.dbtasks.server.audit;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.context.SecurityContextHolderFilter;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * The audit log's settings ({@link AuditProperties}) and the hook that puts {@link AuditFilter} into a
 * security filter chain.
 */
@Configuration
@EnableConfigurationProperties(AuditProperties.class)
public class AuditConfig {
    /** The bean of the controllers' request mappings (Spring MVC's own name). */
    private static final String MAPPINGS = "requestMappingHandlerMapping";

    /**
     * Adds the audit filter to a filter chain being built, right after the security context is
     * loaded, so it sees the caller of every request the chain refuses or lets through. Call it once
     * per chain whose state-changing requests are to be recorded.
     *
     * @param http the chain's builder, from a Spring application context
     * @return {@code http}, for chaining
     */
    public static HttpSecurity recordIn(HttpSecurity http) {
        ApplicationContext context = http.getSharedObject(ApplicationContext.class);
        AuditFilter filter = new AuditFilter(
                context.getBeanProvider(AuditLog.class),
                () -> context.getBean(MAPPINGS, RequestMappingHandlerMapping.class));
        return http.addFilterAfter(filter, SecurityContextHolderFilter.class);
    }
}
