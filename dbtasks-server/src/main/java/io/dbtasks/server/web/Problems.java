package io.dbtasks.server.web;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import org.springframework.http.MediaType;
import tools.jackson.databind.json.JsonMapper;

/**
 * Shared pieces of the server's {@code application/problem+json} (RFC 9457) answers: details are
 * cut to a bounded length and never name Java or Jackson classes, so a rejected 1 MB value or an
 * internal type does not come back to the client.
 */
public final class Problems {
    /** The longest {@code detail} sent, in characters. */
    public static final int MAX_DETAIL = 1000;
    /** The longest client value quoted in a detail, in characters. */
    public static final int MAX_QUOTED = 100;

    private static final Pattern QUALIFIED =
            Pattern.compile("`?\\b(?:[a-z_][a-z0-9_]*\\.)+([A-Z][A-Za-z0-9_]*)(?:\\$[A-Za-z0-9_$]*)?`?");
    private static final Pattern THROWABLE =
            Pattern.compile("\\(?\\b[A-Z][A-Za-z0-9]*(?:Exception|Error)\\b\\)?:?\\s*");
    private static final JsonMapper PLAIN = JsonMapper.builder().build();

    private Problems() {}

    /**
     * @param detail a message, possibly from a library
     * @return it with package-qualified class names reduced to their simple names ({@code
     *     java.lang.Integer} becomes {@code Integer}) and cut to {@value #MAX_DETAIL} characters
     */
    public static String clean(String detail) {
        if (detail == null) {
            return null;
        }
        String s = QUALIFIED.matcher(detail).replaceAll("$1");
        s = THROWABLE.matcher(s).replaceAll("");
        return s.length() <= MAX_DETAIL ? s : s.substring(0, MAX_DETAIL) + "... (cut)";
    }

    /**
     * @param value a value the client sent, or {@code null}
     * @return it cut to {@value #MAX_QUOTED} characters, for quoting in a detail
     */
    public static String quote(Object value) {
        String s = String.valueOf(value);
        return s.length() <= MAX_QUOTED ? s : s.substring(0, MAX_QUOTED) + "... (" + s.length() + " characters)";
    }

    /**
     * Writes a problem document whatever the request accepted (filters and the error page use it).
     *
     * @param response the response, not yet committed
     * @param status the HTTP status
     * @param title the short summary
     * @param detail what was wrong and what to do
     * @throws IOException if writing fails
     */
    public static void write(HttpServletResponse response, int status, String title, String detail) throws IOException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "about:blank");
        body.put("title", title);
        body.put("status", status);
        body.put("detail", clean(detail));
        response.resetBuffer();
        response.setStatus(status);
        response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
        response.setCharacterEncoding("UTF-8");
        response.getWriter().write(PLAIN.writeValueAsString(body));
        response.flushBuffer();
    }

    /**
     * @param rawPath the request's path as sent (percent-encoded)
     * @return it as the problem's {@code instance}, cut to {@value #MAX_QUOTED} characters
     */
    public static URI instance(String rawPath) {
        String p = rawPath;
        if (p.length() > MAX_QUOTED) {
            int end = MAX_QUOTED;
            int pct = p.lastIndexOf('%', end - 1);
            if (pct >= 0 && pct > end - 3) {
                end = pct;
            }
            p = p.substring(0, end) + "...";
        }
        try {
            return URI.create(p);
        } catch (IllegalArgumentException e) {
            return URI.create("/");
        }
    }

    /**
     * @param status an HTTP status
     * @return its reason phrase, e.g. "Not Found", or "Error"
     */
    public static String title(int status) {
        org.springframework.http.HttpStatus s = org.springframework.http.HttpStatus.resolve(status);
        return s == null ? "Error" : s.getReasonPhrase();
    }
}
