package io.dbtasks.server.web;

import org.apache.catalina.core.StandardHost;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

/**
 * The server's web hardening: the request checks of {@link RequestValidationFilter} before anything
 * else, and Tomcat's own error reports as problem+json. (Strict integers in paths and query strings
 * are the API's {@code @InitBinder} editors.)
 */
@Configuration
@EnableConfigurationProperties(ServerLimits.class)
public class WebConfig {
    /**
     * @param limits the size limits
     * @return the filter, first of all
     */
    @Bean
    public FilterRegistrationBean<RequestValidationFilter> requestValidationFilter(ServerLimits limits) {
        FilterRegistrationBean<RequestValidationFilter> bean =
                new FilterRegistrationBean<>(new RequestValidationFilter(limits));
        bean.setOrder(Ordered.HIGHEST_PRECEDENCE + 1);
        return bean;
    }

    /** @return a customizer that makes Tomcat's host report errors as problem+json */
    @Bean
    public WebServerFactoryCustomizer<TomcatServletWebServerFactory> problemErrorReports() {
        return factory -> factory.addContextCustomizers(context -> {
            if (context.getParent() instanceof StandardHost host) {
                host.setErrorReportValveClass(ProblemErrorReportValve.class.getName());
            }
        });
    }
}
