package io.dbtasks.server.idempotency;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Registers {@link IdempotencyKeyFilter} after Spring Security, so it knows the client. */
@Configuration
@EnableConfigurationProperties(IdempotencyProperties.class)
public class IdempotencyConfig {
    /** The filter's order: after Spring Security's filter chain (-100). */
    public static final int ORDER = 0;

    /**
     * @param store the key records
     * @return the filter registration
     */
    @Bean
    public FilterRegistrationBean<IdempotencyKeyFilter> idempotencyKeyFilter(IdempotencyStore store) {
        FilterRegistrationBean<IdempotencyKeyFilter> bean =
                new FilterRegistrationBean<>(new IdempotencyKeyFilter(store));
        bean.setOrder(ORDER);
        bean.addUrlPatterns("/api/*");
        return bean;
    }
}
