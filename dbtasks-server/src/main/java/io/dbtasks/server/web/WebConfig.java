package io.dbtasks.server.web;

import org.apache.catalina.core.StandardHost;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterProperties;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.type.LogicalType;

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

    /**
     * @return the UTF-8 and text checks of every JSON body, right after Spring Security (so an
     *     anonymous caller's body is not read) and before the Idempotency-Key filter hashes it
     */
    @Bean
    public FilterRegistrationBean<JsonBodyFilter> jsonBodyFilter() {
        FilterRegistrationBean<JsonBodyFilter> bean = new FilterRegistrationBean<>(new JsonBodyFilter());
        bean.setOrder(SecurityFilterProperties.DEFAULT_FILTER_ORDER + 1);
        return bean;
    }

    /**
     * JSON is read as written: a property given twice is refused (which of the two would count is
     * otherwise the parser's choice), and a number or boolean is not read as a string ({@code
     * "queue": 1} is a mistake, not the queue {@code "1"}).
     *
     * @return the customizer of the application's JSON mapper
     */
    @Bean
    public JsonMapperBuilderCustomizer strictJson() {
        return builder -> builder.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .withCoercionConfig(
                        LogicalType.Textual,
                        c -> c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail));
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
