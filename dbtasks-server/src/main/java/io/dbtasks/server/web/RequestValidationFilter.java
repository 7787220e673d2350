package io.dbtasks.server.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Checks what the servlet container would otherwise parse leniently or fail on, before anything
 * reads it: every {@code %}-encoding of the path and query string must be two hex digits that decode
 * to UTF-8, and no path segment, parameter name or value may hold a NUL character (400, naming the
 * parameter); a body larger than {@link ServerLimits#getMaxRequestSize()} is refused with 413, by
 * its {@code Content-Length} at once or, when chunked, as soon as it has read past the limit.
 */
public class RequestValidationFilter extends OncePerRequestFilter {
    /** The most query parameters accepted (Tomcat's own limit is 1,000 for query and form together). */
    static final int MAX_PARAMETERS = 200;

    private final long maxRequestSize;

    /** @param limits the request size limit */
    public RequestValidationFilter(ServerLimits limits) {
        this.maxRequestSize = limits.getMaxRequestSize().toBytes();
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String problem = pathProblem(request.getRequestURI());
        if (problem == null && request.getQueryString() != null) {
            problem = queryProblem(request.getQueryString());
        }
        if (problem != null) {
            Problems.write(response, 400, "Bad request", problem);
            return;
        }
        long length = request.getContentLengthLong();
        if (length > maxRequestSize) {
            Problems.write(response, 413, "Content too large", tooLarge());
            return;
        }
        chain.doFilter(length < 0 ? new LimitedRequest(request, maxRequestSize) : request, response);
    }

    private String tooLarge() {
        return "The request body is larger than the limit of " + maxRequestSize
                + " bytes (dbtasks.server.max-request-size)";
    }

    static String pathProblem(String rawPath) {
        for (String segment : rawPath.split("/", -1)) {
            String decoded = decode(segment, false);
            if (decoded == null) {
                return "The path has an invalid %-encoding (each % must be followed by two hex digits that"
                        + " encode UTF-8): '" + Problems.quote(segment) + "'";
            }
            if (decoded.indexOf('\0') >= 0) {
                return "The path contains a NUL character (%00); remove it";
            }
        }
        return null;
    }

    static String queryProblem(String rawQuery) {
        String[] pairs = rawQuery.split("&", -1);
        if (pairs.length > MAX_PARAMETERS) {
            return "The query string has " + pairs.length + " parameters; at most " + MAX_PARAMETERS + " are accepted";
        }
        for (String pair : pairs) {
            int eq = pair.indexOf('=');
            String rawName = eq < 0 ? pair : pair.substring(0, eq);
            String name = decode(rawName, true);
            if (name == null) {
                return "A query parameter name has an invalid %-encoding (each % must be followed by two hex"
                        + " digits that encode UTF-8): '" + Problems.quote(rawName) + "'";
            }
            String shown = Problems.quote(name.replace('\0', '?'));
            if (name.indexOf('\0') >= 0) {
                return "Query parameter name '" + shown + "' contains a NUL character (%00); remove it";
            }
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1), true);
            if (value == null) {
                return "Query parameter '" + shown + "' has an invalid %-encoding (each % must be followed by two"
                        + " hex digits that encode UTF-8)";
            }
            if (value.indexOf('\0') >= 0) {
                return "Query parameter '" + shown + "' contains a NUL character (%00); remove it";
            }
        }
        return null;
    }

    /** Strict percent-decoding: {@code null} if a {@code %} is malformed or the bytes are not UTF-8. */
    static String decode(String s, boolean plusIsSpace) {
        if (s.indexOf('%') < 0 && !(plusIsSpace && s.indexOf('+') >= 0)) {
            return s;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(s.length());
        byte[] raw = s.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < raw.length; i++) {
            byte b = raw[i];
            if (b == '%') {
                if (i + 2 >= raw.length) {
                    return null;
                }
                int hi = Character.digit(raw[i + 1], 16);
                int lo = Character.digit(raw[i + 2], 16);
                if (hi < 0 || lo < 0 || raw[i + 1] > 'f' || raw[i + 2] > 'f') {
                    return null;
                }
                bytes.write(hi * 16 + lo);
                i += 2;
            } else if (b == '+' && plusIsSpace) {
                bytes.write(' ');
            } else {
                bytes.write(b);
            }
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** Thrown when a chunked body reads past the limit; answered with 413. */
    public static class RequestTooLargeException extends IOException {
        /** @param message the detail */
        public RequestTooLargeException(String message) {
            super(message);
        }
    }

    private final class LimitedRequest extends HttpServletRequestWrapper {
        private final long limit;
        private ServletInputStream stream;

        LimitedRequest(HttpServletRequest request, long limit) {
            super(request);
            this.limit = limit;
        }

        @Override
        public ServletInputStream getInputStream() throws IOException {
            if (stream == null) {
                ServletInputStream in = super.getInputStream();
                stream = new ServletInputStream() {
                    private long read;

                    @Override
                    public int read() throws IOException {
                        int b = in.read();
                        if (b >= 0) {
                            count(1);
                        }
                        return b;
                    }

                    @Override
                    public int read(byte[] buf, int off, int len) throws IOException {
                        int n = in.read(buf, off, len);
                        if (n > 0) {
                            count(n);
                        }
                        return n;
                    }

                    private void count(int n) throws IOException {
                        read += n;
                        if (read > limit) {
                            throw new RequestTooLargeException(tooLarge());
                        }
                    }

                    @Override
                    public boolean isFinished() {
                        return in.isFinished();
                    }

                    @Override
                    public boolean isReady() {
                        return in.isReady();
                    }

                    @Override
                    public void setReadListener(ReadListener listener) {
                        in.setReadListener(listener);
                    }
                };
            }
            return stream;
        }
    }
}
