package io.dbtasks.server.store;

import java.util.Locale;
import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Adds {@code DB_CLOSE_ON_EXIT=FALSE} to an H2 {@code spring.datasource.url} that does not set it.
 *
 * <p>By default H2 closes an embedded database from a JVM shutdown hook of its own. JVM shutdown
 * hooks run concurrently, so on SIGTERM that hook races Spring's: the database could close while the
 * engine was still finishing its running tasks and handing the rest back, which then failed, and a
 * task with no attempts left ended FAILED when its lease expired. With the setting, the database
 * stays open until Spring closes the connection pool, which it does only after the engine's
 * lifecycle has stopped (the pool is closed when its bean is destroyed, after every lifecycle bean
 * has stopped). A URL that sets {@code DB_CLOSE_ON_EXIT} itself is left as it is.
 */
public class H2CloseOnExit implements EnvironmentPostProcessor, Ordered {
    static final String URL = "spring.datasource.url";
    static final String SETTING = ";DB_CLOSE_ON_EXIT=FALSE";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        String url = environment.getProperty(URL);
        String fixed = withCloseOnExitOff(url);
        if (fixed != null && !fixed.equals(url)) {
            environment
                    .getPropertySources()
                    .addFirst(new MapPropertySource("dbtasksH2CloseOnExit", Map.of(URL, fixed)));
        }
    }

    /**
     * @param url a JDBC URL, or {@code null}
     * @return an H2 URL with {@code DB_CLOSE_ON_EXIT=FALSE} added unless it names the setting
     *     already; any other URL (and {@code null}) unchanged
     */
    static String withCloseOnExitOff(String url) {
        if (url == null || !url.regionMatches(true, 0, "jdbc:h2:", 0, 8)) {
            return url;
        }
        if (url.toUpperCase(Locale.ROOT).contains("DB_CLOSE_ON_EXIT")) {
            return url;
        }
        return url + SETTING;
    }

    /** Runs after the configuration files and the environment have been read. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
