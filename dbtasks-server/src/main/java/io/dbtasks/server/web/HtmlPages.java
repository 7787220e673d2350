package io.dbtasks.server.web;

import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.util.HtmlUtils;

/**
 * The plain error page a browser gets outside {@code /api} where an API client gets problem+json:
 * a title, a message and a way back to the dashboard, without scripts (it passes the
 * Content-Security-Policy) and with every text escaped.
 */
public final class HtmlPages {
    private HtmlPages() {}

    /**
     * @param request a request
     * @return whether it is outside {@code /api} and its {@code Accept} header names {@code text/html}
     *     (a browser's navigation; {@code *}{@code /*} alone does not count)
     */
    public static boolean wantsHtml(HttpServletRequest request) {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        String accept = request.getHeader(HttpHeaders.ACCEPT);
        if (path.equals("/api") || path.startsWith("/api/") || accept == null) {
            return false;
        }
        try {
            return MediaType.parseMediaTypes(accept).stream()
                    .anyMatch(m -> !m.isWildcardType() && m.isCompatibleWith(MediaType.TEXT_HTML));
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * @param request the request, for the context path
     * @param title the heading, such as "Not found"
     * @param message what happened and what to do
     * @return the page
     */
    public static String page(HttpServletRequest request, String title, String message) {
        String home = HtmlUtils.htmlEscape(request.getContextPath() + "/");
        return """
                <!DOCTYPE html>
                <html lang="en">
                <head>
                <meta charset="utf-8">
                <meta name="viewport" content="width=device-width, initial-scale=1">
                <title>%s - dbtasks</title>
                <link rel="stylesheet" href="%scss/dashboard.css">
                </head>
                <body>
                <main>
                <h1>%s</h1>
                <p class="error" id="error-message">%s</p>
                <p><a href="%s">Back to the dashboard</a></p>
                </main>
                </body>
                </html>
                """.formatted(
                HtmlUtils.htmlEscape(title), home, HtmlUtils.htmlEscape(title), HtmlUtils.htmlEscape(message), home);
    }
}
