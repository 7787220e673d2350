package io.dbtasks.spring.autoconfigure;

import io.dbtasks.spring.TaskMethod;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code dbtasks.jobs.*} properties: job definitions' allow-list beyond {@link TaskMethod}. */
@ConfigurationProperties("dbtasks.jobs")
public class DbTasksJobsProperties {
    /**
     * Methods job definitions may call besides those annotated with {@link TaskMethod}, each as
     * {@code beanName.methodName} (every public overload) or {@code beanName.methodName(type, ...)}
     * with the declared parameter types' names (for example {@code
     * orderService.syncOrder(java.lang.Long, java.lang.String)}). Checked at startup: an entry that
     * matches no public method of the bean fails the startup.
     */
    private List<String> allowedMethods = new ArrayList<>();

    /** @return the configured entries */
    public List<String> getAllowedMethods() {
        return allowedMethods;
    }

    /** @param allowedMethods the configured entries */
    public void setAllowedMethods(List<String> allowedMethods) {
        this.allowedMethods = allowedMethods;
    }
}
