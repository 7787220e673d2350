package io.dbtasks.server.audit;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * Records every state-changing request of an authenticated caller in the {@link AuditLog}: each
 * {@code POST}, {@code PUT}, {@code PATCH} and {@code DELETE}, through the API or the dashboard,
 * whether it succeeded, was refused (by a role rule, CSRF, validation, or the state of the task) or
 * failed. One entry per request, written after the response status is settled.
 *
 * <p>It sits in Spring Security's filter chains right after the security context is loaded, so it
 * wraps authentication, the role rules and the controllers: after the chain returns, the caller is
 * known even when the request was refused. Not recorded: requests without an authenticated caller
 * (they never reach an action; failed logins are the login's business), {@code /login} and
 * {@code /logout}, and {@code POST}s that only read ({@value #PREVIEW}).
 *
 * <p>The entry names the endpoint by its path pattern (the handler's, or the one that would have
 * served a refused request), the path variables as the target, the {@code Location} of a created
 * resource, and a summary of the query and form parameters: never the request body, never the CSRF
 * token, never a parameter whose name suggests a secret. Controllers add what only they know (a bulk
 * action's filter and count) through {@link AuditDetails}. If the entry cannot be stored, the request's
 * answer is not changed; the failure is logged.
 */
public class AuditFilter extends OncePerRequestFilter {
    /** The dashboard's bulk preview: a POST that changes nothing. */
    static final String PREVIEW = "/dashboard/bulk/preview";

    private static final Logger log = LoggerFactory.getLogger(AuditFilter.class);
    private static final Set<String> WRITES = Set.of("POST", "PUT", "PATCH", "DELETE");
    private static final Set<String> NOT_ACTIONS = Set.of("/login", "/logout", PREVIEW);
    private static final Pattern SECRET_NAME =
            Pattern.compile("(?i).*(pass|secret|token|credential|authorization|_csrf).*");
    /** A path variable with a pattern of literal alternatives ({@code {action:retry|cancel}}) names a verb. */
    private static final Pattern VARIABLE = Pattern.compile("\\{([^}:]+)(?::([^}]*))?}");

    private static final int MAX_VALUE = 100;

    private final ObjectProvider<AuditLog> auditLog;
    private final Supplier<RequestMappingHandlerMapping> mappings;

    /**
     * @param auditLog where entries go, resolved at the first request
     * @param mappings the controllers' mappings, to name the endpoint of a request refused before it
     *     reached one; asked at each such request, may supply {@code null}
     */
    public AuditFilter(ObjectProvider<AuditLog> auditLog, Supplier<RequestMappingHandlerMapping> mappings) {
        this.auditLog = auditLog;
        this.mappings = mappings;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !WRITES.contains(request.getMethod().toUpperCase(Locale.ROOT))
                || NOT_ACTIONS.contains(pathWithinApplication(request));
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        AuditDetails details = new AuditDetails();
        request.setAttribute(AuditDetails.ATTRIBUTE, details);
        boolean threw = true;
        try {
            chain.doFilter(request, response);
            threw = false;
        } finally {
            // An exception leaving the chain becomes a 500 further out.
            record(request, response.getStatus() < 400 && threw ? 500 : response.getStatus(), response, details);
        }
    }

    private void record(HttpServletRequest request, int status, HttpServletResponse response, AuditDetails details) {
        Authentication caller = SecurityContextHolder.getContext().getAuthentication();
        if (caller == null || !caller.isAuthenticated() || caller instanceof AnonymousAuthenticationToken) {
            return;
        }
        try {
            AuditLog target = auditLog.getObject();
            String path = pathWithinApplication(request);
            Endpoint endpoint = endpoint(request, path);
            StringBuilder targets = new StringBuilder(endpoint.target());
            String location = response.getHeader(HttpHeaders.LOCATION);
            if (location != null && status < 400) {
                append(targets, "location=" + pathOf(location));
            }
            AuditEntry entry = new AuditEntry(
                    0,
                    target.clock().instant(),
                    caller.getName(),
                    role(caller),
                    path.startsWith("/api/") ? "api" : "dashboard",
                    request.getMethod().toUpperCase(Locale.ROOT) + " " + endpoint.action(),
                    targets.isEmpty() ? null : targets.toString(),
                    parameters(request),
                    details.filter(),
                    details.touched(),
                    AuditOutcome.of(status),
                    status,
                    request.getRemoteAddr());
            long id = target.append(entry);
            CompletionStage<? extends Number> later = details.touchedLater();
            if (later != null) {
                later.whenComplete((n, e) -> {
                    if (n != null) {
                        fillTouched(target, id, n.longValue());
                    }
                });
            }
        } catch (RuntimeException e) {
            log.error(
                    "Could not record the audit entry of {} {} by {} (status {})",
                    request.getMethod(),
                    AuditLog.text(request.getRequestURI(), 200),
                    AuditLog.text(caller.getName(), AuditLog.ACTOR_LENGTH),
                    status,
                    e);
        }
    }

    private static void fillTouched(AuditLog target, long id, long touched) {
        try {
            target.fillTouched(id, touched);
        } catch (RuntimeException e) {
            log.warn("Could not add the count of touched tasks ({}) to audit entry {}: {}", touched, id, e.toString());
        }
    }

    /** The endpoint's name and targets, from the handler that served the request or would have. */
    record Endpoint(String action, String target) {}

    Endpoint endpoint(HttpServletRequest request, String path) {
        Object pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
        Object variables = request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
        if (!(pattern instanceof String) && !path.startsWith("/actuator")) {
            // Refused before a handler ran (a role rule, CSRF): ask the mappings which one it was for.
            lookUp(request);
            pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
            variables = request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
        }
        if (!(pattern instanceof String p) || p.contains("**")) {
            return new Endpoint(path, "");
        }
        Map<?, ?> values = variables instanceof Map<?, ?> m ? m : Map.of();
        StringBuilder action = new StringBuilder();
        StringBuilder target = new StringBuilder();
        Matcher v = VARIABLE.matcher(p);
        while (v.find()) {
            String name = v.group(1);
            Object value = values.get(name);
            boolean verb = v.group(2) != null && v.group(2).matches("[A-Za-z0-9_|-]+") && value != null;
            v.appendReplacement(action, Matcher.quoteReplacement(verb ? value.toString() : "{" + name + "}"));
            if (!verb && value != null) {
                append(target, name + "=" + value);
            }
        }
        v.appendTail(action);
        return new Endpoint(action.toString(), target.toString());
    }

    private void lookUp(HttpServletRequest request) {
        RequestMappingHandlerMapping mapping = mappings.get();
        if (mapping == null) {
            return;
        }
        Object previous = request.getAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE);
        try {
            ServletRequestPathUtils.parseAndCache(request);
            mapping.getHandler(request);
        } catch (Exception e) {
            // No endpoint (404, 405, 415): the raw path names the request.
        } finally {
            if (previous == null) {
                ServletRequestPathUtils.clearParsedRequestPath(request);
            }
        }
    }

    private static String parameters(HttpServletRequest request) {
        Map<String, String[]> all;
        String type = request.getContentType();
        boolean form =
                type != null && type.toLowerCase(Locale.ROOT).startsWith(MediaType.APPLICATION_FORM_URLENCODED_VALUE);
        if (form || request.getQueryString() != null) {
            // Form fields are what the dashboard sent; for other bodies this reads the query string only.
            try {
                all = request.getParameterMap();
            } catch (RuntimeException e) {
                return null;
            }
        } else {
            return null;
        }
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, String[]> p : new TreeMap<>(all).entrySet()) {
            if (SECRET_NAME.matcher(p.getKey()).matches()) {
                continue;
            }
            for (String value : p.getValue()) {
                if (value == null || value.isEmpty()) {
                    continue;
                }
                if (!b.isEmpty()) {
                    b.append('&');
                }
                b.append(AuditLog.text(p.getKey(), MAX_VALUE)).append('=').append(AuditLog.text(value, MAX_VALUE));
                if (b.length() > AuditLog.PARAMETERS_LENGTH) {
                    return b.toString();
                }
            }
        }
        return b.isEmpty() ? null : b.toString();
    }

    private static String role(Authentication caller) {
        for (String role : new String[] {"admin", "operator", "viewer"}) {
            String authority = "ROLE_" + role.toUpperCase(Locale.ROOT);
            for (GrantedAuthority a : caller.getAuthorities()) {
                if (authority.equals(a.getAuthority())) {
                    return role;
                }
            }
        }
        return "none";
    }

    private static String pathWithinApplication(HttpServletRequest request) {
        String uri = request.getRequestURI();
        String context = request.getContextPath();
        return context != null && !context.isEmpty() && uri.startsWith(context) ? uri.substring(context.length()) : uri;
    }

    private static String pathOf(String location) {
        try {
            URI uri = URI.create(location);
            return uri.getRawPath() == null ? location : uri.getRawPath();
        } catch (IllegalArgumentException e) {
            return location;
        }
    }

    private static void append(StringBuilder b, String s) {
        if (!b.isEmpty()) {
            b.append(", ");
        }
        b.append(s);
    }
}
