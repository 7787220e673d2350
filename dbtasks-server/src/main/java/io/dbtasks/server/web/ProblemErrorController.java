package io.dbtasks.server.web;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.RequestMapping;

/**
 * The error page every error the servlet container sees ends at (Tomcat's 400 for a rejected URL,
 * Spring Security's firewall, an exception no handler caught): always {@code application/problem+json},
 * whatever the client accepts, with a generic detail per status, never a stack trace or class name.
 * Requested directly ({@code GET /error}), there is no error to show: 404.
 */
@Controller
public class ProblemErrorController implements ErrorController {
    private static final Logger log = LoggerFactory.getLogger(ProblemErrorController.class);

    /**
     * @param request the failed request, forwarded here by the container
     * @param response its response
     * @throws IOException if writing fails
     */
    @RequestMapping("${server.error.path:/error}")
    public void error(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        if (!(code instanceof Integer status)) {
            Problems.write(response, 404, "Not Found", "There is no endpoint " + request.getMethod() + " /error");
            return;
        }
        Object exception = request.getAttribute(RequestDispatcher.ERROR_EXCEPTION);
        if (status >= 500 && exception instanceof Throwable t) {
            log.error("Unhandled error while serving {}", request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI), t);
        }
        Problems.write(response, status, Problems.title(status), detail(status));
    }

    static String detail(int status) {
        return switch (status) {
            case 400 -> "The request is malformed (its URL, headers or body); check its encoding and syntax";
            case 401 -> "Authentication is required";
            case 403 -> "Forbidden";
            case 404 -> "There is no such resource";
            case 405 -> "This method is not allowed on this path";
            case 408 -> "The request took too long to arrive";
            case 413 -> "The request is too large";
            case 414 -> "The URL is too long";
            case 431 -> "The request headers are too large";
            default -> status >= 500 ? "The server failed; see its log" : "The request cannot be served";
        };
    }
}
