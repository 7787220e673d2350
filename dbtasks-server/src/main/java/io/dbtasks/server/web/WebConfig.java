package io.dbtasks.server.web;

import java.util.regex.Pattern;
import org.apache.catalina.core.StandardHost;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.convert.converter.Converter;
import org.springframework.format.FormatterRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The server's web hardening: the request checks of {@link RequestValidationFilter} before anything
 * else, Tomcat's own error reports as problem+json, and strict integers in paths and query strings
 * (ASCII digits with an optional minus, nothing else: no {@code 0x10}, {@code #10}, {@code +1},
 * spaces or other scripts' digits).
 */
@Configuration
@EnableConfigurationProperties(ServerLimits.class)
public class WebConfig implements WebMvcConfigurer {
    private static final Pattern INTEGER = Pattern.compile("-?[0-9]{1,19}");

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

    @Override
    public void addFormatters(FormatterRegistry registry) {
        registry.addConverter(String.class, Long.class, (Converter<String, Long>) WebConfig::parseLong);
        registry.addConverter(String.class, Integer.class, (Converter<String, Integer>) s -> {
            Long v = parseLong(s);
            if (v == null) {
                return null;
            }
            if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("out of range");
            }
            return v.intValue();
        });
    }

    private static Long parseLong(String s) {
        if (s.isEmpty()) {
            return null;
        }
        if (!INTEGER.matcher(s).matches()) {
            throw new IllegalArgumentException("not a plain decimal integer");
        }
        return Long.parseLong(s);
    }
}
