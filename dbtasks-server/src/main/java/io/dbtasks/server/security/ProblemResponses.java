package io.dbtasks.server.security;

import io.dbtasks.server.web.HtmlPages;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.web.AuthenticationEntryPoint;
import org.springframework.security.web.access.AccessDeniedHandler;
import org.springframework.security.web.csrf.CsrfException;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * Answers the security filters' refusals as {@code application/problem+json} (RFC 9457): 401 with a
 * {@code WWW-Authenticate} challenge for Basic and Bearer when no valid credentials came, 429 with
 * {@code Retry-After} when the login was throttled ({@link LoginThrottle}), 403 when the caller's role
 * does not allow the request or a CSRF token is missing (a browser's page outside {@code /api} gets
 * the 403 for its role as an HTML page).
 */
@Component
public class ProblemResponses implements AuthenticationEntryPoint, AccessDeniedHandler {
    /** The challenge of every 401: HTTP basic or a bearer token. */
    public static final String CHALLENGE = "Basic realm=\"dbtasks\", Bearer realm=\"dbtasks\"";

    private final JsonMapper mapper;

    /** @param mapper writes the problem documents */
    public ProblemResponses(JsonMapper mapper) {
        this.mapper = mapper;
    }

    @Override
    public void commence(HttpServletRequest request, HttpServletResponse response, AuthenticationException e)
            throws IOException {
        if (e instanceof LoginThrottledException throttled) {
            long seconds = Math.max(1, throttled.retryAfter().toSeconds());
            response.setHeader(HttpHeaders.RETRY_AFTER, String.valueOf(seconds));
            write(
                    response,
                    429,
                    "Too many requests",
                    "Too many failed logins for this user name or from this address; the password was not"
                            + " checked. Try again in " + seconds + " s");
            return;
        }
        response.setHeader(HttpHeaders.WWW_AUTHENTICATE, CHALLENGE);
        write(
                response,
                401,
                "Unauthorized",
                "Authentication is required: log in at /login, or send HTTP basic credentials"
                        + " (curl -u user:password) or Authorization: Bearer <token>");
    }

    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, AccessDeniedException e)
            throws IOException {
        if (e instanceof CsrfException) {
            write(
                    response,
                    403,
                    "Forbidden",
                    "The request has no valid CSRF token: submit the form from a page of this server (reload it"
                            + " if your session expired); API clients use /api with basic or bearer credentials");
            return;
        }
        if (HtmlPages.wantsHtml(request)) {
            response.setStatus(403);
            response.setContentType(MediaType.TEXT_HTML_VALUE);
            response.setCharacterEncoding("UTF-8");
            response.getWriter()
                    .write(HtmlPages.page(
                            request,
                            "Not allowed for your role",
                            "Your role does not allow this action; ask an administrator for a role that does."));
            return;
        }
        write(
                response,
                403,
                "Forbidden",
                "Your role does not allow " + request.getMethod() + " on this path: reading needs viewer; task and"
                        + " queue actions need operator; job definitions (and running them), schedules and deletes need admin;"
                        + " the metrics role scrapes /actuator/prometheus only");
    }

    /**
     * Writes a problem document.
     *
     * @param response the response, not yet committed
     * @param status the HTTP status
     * @param title the short summary
     * @param detail what was wrong and what to do
     * @throws IOException if writing fails
     */
    public void write(HttpServletResponse response, int status, String title, String detail) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "about:blank");
        body.put("title", title);
        body.put("status", status);
        body.put("detail", detail);
        response.setStatus(status);
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.setCharacterEncoding("UTF-8");
        response.getWriter().write(mapper.writeValueAsString(body));
    }
}
