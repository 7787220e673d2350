package io.dbtasks.server.api;

import io.dbtasks.server.web.HtmlPages;
import io.dbtasks.server.web.Problems;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.resource.NoResourceFoundException;

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
        if (!HtmlPages.wantsHtml(request)) {
            return api.handleException(e, web);
        }
        String path = request.getRequestURI().substring(request.getContextPath().length());
        String page = HtmlPages.page(request, "Not found", "There is no page at " + Problems.quote(path) + ".");
        return ResponseEntity.status(HttpStatus.NOT_FOUND)
                .contentType(new MediaType(MediaType.TEXT_HTML, java.nio.charset.StandardCharsets.UTF_8))
                .body(page);
    }
}
