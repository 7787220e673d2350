package io.dbtasks.server.web;

import io.dbtasks.server.api.ApiExceptionHandler;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.resource.NoResourceFoundException;
import org.springframework.web.util.HtmlUtils;

/**
 * A page that does not exist, asked for by a browser outside {@code /api}: an HTML page saying so,
 * with a way back to the dashboard. API clients, and every client under {@code /api}, get the
 * problem+json of {@link ApiExceptionHandler} as before.
 */
@ControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
public class HtmlNotFoundAdvice {
    private final ApiExceptionHandler api;

    /** @param api the problem+json answer for everyone but browsers */
    public HtmlNotFoundAdvice(ApiExceptionHandler api) {
        this.api = api;
    }

    /**
     * @param e no handler or static resource for the path
     * @param request the request
     * @param web the same, for the API's handler
     * @return the HTML page, or the API's problem
     * @throws Exception if the API's handler fails
     */
    @ExceptionHandler({NoResourceFoundException.class, NoHandlerFoundException.class})
    public ResponseEntity<?> notFound(Exception e, HttpServletRequest request, WebRequest web) throws Exception {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        if (path.startsWith("/api/") || !wantsHtml(request)) {
            return api.handleException(e, web);
        }
        String home = HtmlUtils.htmlEscape(request.getContextPath() + "/");
        String page = """
                <!DOCTYPE html>
                <html lang="en">
                <head>
                <meta charset="utf-8">
                <meta name="viewport" content="width=device-width, initial-scale=1">
                <title>Not found - dbtasks</title>
                <link rel="stylesheet" href="%scss/dashboard.css">
                </head>
                <body>
                <main>
                <h1>Not found</h1>
                <p class="error" id="error-message">There is no page at %s.</p>
                <p><a href="%s">Back to the dashboard</a></p>
                </main>
                </body>
                </html>
                """.formatted(home, HtmlUtils.htmlEscape(Problems.quote(path)), home);
        return ResponseEntity.status(HttpStatus.NOT_FOUND)
                .contentType(new MediaType(MediaType.TEXT_HTML, java.nio.charset.StandardCharsets.UTF_8))
                .body(page);
    }

    private static boolean wantsHtml(HttpServletRequest request) {
        String accept = request.getHeader(HttpHeaders.ACCEPT);
        if (accept == null) {
            return false;
        }
        try {
            return MediaType.parseMediaTypes(accept).stream()
                    .anyMatch(m -> !m.isWildcardType() && m.isCompatibleWith(MediaType.TEXT_HTML));
        } catch (RuntimeException ex) {
            return false;
        }
    }
}
