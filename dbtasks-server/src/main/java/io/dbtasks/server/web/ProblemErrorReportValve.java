package io.dbtasks.server.web;

import java.io.IOException;
import java.io.Writer;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;

/**
 * Tomcat's last-resort error report (for errors that never reach the application's error page, such
 * as a URL rejected while it is parsed) as {@code application/problem+json} instead of an HTML page.
 */
public class ProblemErrorReportValve extends ErrorReportValve {
    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int status = response.getStatus();
        if (status < 400 || response.getContentWritten() > 0) {
            return;
        }
        try {
            response.resetBuffer();
            response.setContentType("application/problem+json");
            response.setCharacterEncoding("UTF-8");
            Writer writer = response.getReporter();
            if (writer != null) {
                writer.write("{\"type\":\"about:blank\",\"title\":\"" + Problems.title(status) + "\",\"status\":"
                        + status + ",\"detail\":\"" + ProblemErrorController.detail(status) + "\"}");
                response.finishResponse();
            }
        } catch (IOException | IllegalStateException e) {
            // The client is gone or the response was committed: nothing more to say.
        }
    }
}
