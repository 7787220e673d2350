package io.dbtasks.server.security;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Set;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configurers.AuthorizeHttpRequestsConfigurer;
import org.springframework.security.web.servlet.util.matcher.PathPatternRequestMatcher;
import org.springframework.security.web.util.matcher.RegexRequestMatcher;

/**
 * Which role each action needs, stated once for the API and the dashboard alike; the controllers
 * hold no role checks of their own. By path and method, so a new endpoint is covered without being
 * listed:
 *
 * <ul>
 *   <li>{@code /actuator/prometheus}: {@code metrics} or admin; the rest of {@code /actuator} (but
 *       health, which is anonymous with details for viewers) admin;
 *   <li>the audit log ({@code /api/audit}, {@code /dashboard/audit}): admin, reads included;
 *   <li>other reads ({@code GET}, {@code HEAD}): viewer;
 *   <li>admin: writes to job definitions and their runs, whichever path runs them ({@code /api/jobs/**},
 *       {@code /api/job-runs}, the dashboard's {@code /dashboard/definitions/**}), writes to schedules
 *       ({@code /api/schedules/**}, {@code /dashboard/schedules/**}), every {@code DELETE}, a
 *       {@code POST} to a path ending in {@code /delete}, and a dashboard bulk action other than
 *       retry, cancel or run-now;
 *   <li>every other write: operator.
 * </ul>
 */
public final class RoleRules {
    private static final String[] ADMIN_WRITES = {
        "/api/jobs",
        "/api/jobs/**",
        "/api/job-runs",
        "/api/job-runs/**",
        "/api/schedules",
        "/api/schedules/**",
        "/jobs",
        "/jobs/**",
        "/schedules",
        "/schedules/**",
        "/dashboard/schedules/**",
        "/dashboard/definitions/**"
    };

    /** The bulk actions an operator may start from the dashboard; any other (delete) needs admin. */
    private static final Set<String> OPERATOR_BULK_ACTIONS = Set.of("retry", "cancel", "run-now");

    private RoleRules() {}

    /**
     * Adds the rules to a filter chain's authorization; the chain permits its anonymous paths before.
     *
     * @param a the chain's request authorization
     */
    public static void apply(
            AuthorizeHttpRequestsConfigurer<HttpSecurity>.AuthorizationManagerRequestMatcherRegistry a) {
        a.requestMatchers("/actuator/prometheus").hasAnyRole("METRICS", "ADMIN");
        a.requestMatchers("/actuator", "/actuator/**").hasRole("ADMIN");
        a.requestMatchers("/api/audit", "/api/audit/**", "/dashboard/audit", "/dashboard/audit/**")
                .hasRole("ADMIN");
        a.requestMatchers(HttpMethod.GET).hasRole("VIEWER");
        a.requestMatchers(HttpMethod.HEAD).hasRole("VIEWER");
        for (HttpMethod write : new HttpMethod[] {HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH}) {
            for (String path : ADMIN_WRITES) {
                a.requestMatchers(PathPatternRequestMatcher.withDefaults().matcher(write, path))
                        .hasRole("ADMIN");
            }
        }
        a.requestMatchers(HttpMethod.DELETE).hasRole("ADMIN");
        a.requestMatchers(RegexRequestMatcher.regexMatcher(HttpMethod.POST, "^[^?]*/delete(\\?.*)?$"))
                .hasRole("ADMIN");
        a.requestMatchers(RoleRules::adminBulkAction).hasRole("ADMIN");
        a.anyRequest().hasRole("OPERATOR");
    }

    /** A dashboard bulk action (or its preview) whose {@code action} is not one an operator may start. */
    private static boolean adminBulkAction(HttpServletRequest request) {
        if (!HttpMethod.POST.matches(request.getMethod())) {
            return false;
        }
        String path = request.getRequestURI().substring(request.getContextPath().length());
        if (!path.equals("/dashboard/bulk") && !path.equals("/dashboard/bulk/preview")) {
            return false;
        }
        String[] actions = request.getParameterValues("action");
        if (actions == null) {
            return false; // refused as a bad request by the controller
        }
        for (String action : actions) {
            if (!OPERATOR_BULK_ACTIONS.contains(action)) {
                return true;
            }
        }
        return false;
    }
}
