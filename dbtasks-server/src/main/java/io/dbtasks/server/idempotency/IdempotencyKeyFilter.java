package io.dbtasks.server.idempotency;

import io.dbtasks.server.web.CachedBodyRequest;
import io.dbtasks.server.web.Problems;
import io.dbtasks.server.web.RequestValidationFilter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collections;
import java.util.HexFormat;
import org.springframework.http.HttpHeaders;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.web.firewall.RequestRejectedException;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * The {@code Idempotency-Key} request header on {@code POST} and {@code PATCH} under {@code /api}
 * (enqueue and every operator action), after the IETF httpapi draft "The Idempotency-Key HTTP
 * Header Field" (draft-ietf-httpapi-idempotency-key-header): the first request with a key runs and
 * its response (status, body, Content-Type, Location, Warning) is stored; a repeat with the same key and the
 * same request (method, path, query and body, by SHA-256) gets that response again, marked
 * {@code Idempotent-Replayed: true}; the same key with a different request gets 422; a repeat while
 * the first is still running gets 409 with {@code Retry-After: 1}. Keys are scoped to the
 * authenticated user, so one client never sees another's response, and expire after
 * {@code dbtasks.server.idempotency.ttl} (default 24 h) from first use. A response the server failed
 * to produce (5xx) is not stored: the key may be used again at once. The key is a string of 1 to 255
 * printable ASCII characters, bare or as a structured-field string ({@code "..."}); a request with two
 * or more {@code Idempotency-Key} headers is refused with 400 (a client must not send two).
 *
 * <p>A record left in flight by a server that died is taken over once its lease has passed (see
 * {@link IdempotencyStore}), and the request runs again; the request carries {@link #TASK_KEY} so
 * that enqueueing finds the task the first run created.
 */
public class IdempotencyKeyFilter extends OncePerRequestFilter {
    /** The request header. */
    public static final String HEADER = "Idempotency-Key";
    /** The response header that marks a replay. */
    public static final String REPLAYED = "Idempotent-Replayed";
    /** The longest key accepted, in characters. */
    public static final int MAX_KEY_LENGTH = 255;
    /**
     * The request attribute holding the task idempotency key derived from the header and the user
     * ({@link IdempotencyStore#taskKey}); set on every request this filter lets through.
     */
    public static final String TASK_KEY = IdempotencyKeyFilter.class.getName() + ".taskKey";

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(IdempotencyKeyFilter.class);

    private final IdempotencyStore store;

    /** @param store where keys are claimed and responses kept */
    public IdempotencyKeyFilter(IdempotencyStore store) {
        this.store = store;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        if (!(request.getMethod().equals("POST") || request.getMethod().equals("PATCH")) || !path.startsWith("/api/")) {
            return true;
        }
        try {
            return request.getHeader(HEADER) == null;
        } catch (RequestRejectedException e) {
            return false; // refused below with 400
        }
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String key;
        try {
            if (Collections.list(request.getHeaders(HEADER)).size() > 1) {
                Problems.write(
                        response,
                        400,
                        "Bad request",
                        "The request has more than one Idempotency-Key header; send one Idempotency-Key header"
                                + " with one key");
                return;
            }
            key = parseKey(request.getHeader(HEADER));
        } catch (RequestRejectedException e) {
            key = null; // a value the firewall refuses: not printable ASCII
        }
        if (key == null) {
            Problems.write(
                    response,
                    400,
                    "Bad request",
                    "The Idempotency-Key header must be 1 to " + MAX_KEY_LENGTH
                            + " printable ASCII characters, bare or in double quotes");
            return;
        }
        Authentication auth = SecurityContextHolder.getContext().getAuthentication();
        String client = auth == null ? "anonymous" : auth.getName();
        byte[] body;
        try {
            body = request.getInputStream().readAllBytes();
        } catch (RequestValidationFilter.RequestTooLargeException e) {
            Problems.write(response, 413, "Content too large", e.getMessage());
            return;
        }
        String hash = fingerprint(request, body);
        IdempotencyStore.Claim claim = store.claim(client, key, hash);
        if (claim instanceof IdempotencyStore.Existing existing) {
            IdempotencyStore.Entry entry = existing.entry();
            if (!entry.requestHash().equals(hash)) {
                Problems.write(
                        response,
                        422,
                        "Idempotency key reused",
                        "This Idempotency-Key was used with a different request (method, path, query or body);"
                                + " use a new key for a new request");
            } else if (!entry.done()) {
                response.setHeader(HttpHeaders.RETRY_AFTER, "1");
                Problems.write(
                        response,
                        409,
                        "Request in progress",
                        "A request with this Idempotency-Key is still being processed; retry shortly to get its"
                                + " response");
            } else {
                replay(entry, response);
            }
            return;
        }
        IdempotencyStore.Claimed claimed = (IdempotencyStore.Claimed) claim;
        if (claimed.takenFrom() != null) {
            log.info(
                    "Idempotency-Key record of user {} held by {} had no renewal for {}; taken over, the request runs"
                            + " again",
                    client,
                    claimed.takenFrom(),
                    store.properties().getLease());
        }
        request.setAttribute(TASK_KEY, IdempotencyStore.taskKey(client, key, claimed.createdAt()));
        ContentCachingResponseWrapper wrapper = new ContentCachingResponseWrapper(response);
        boolean stored = false;
        try {
            chain.doFilter(new CachedBodyRequest(request, body), wrapper);
            int status = wrapper.getStatus();
            if (status < 500) {
                store.complete(
                        client,
                        key,
                        status,
                        wrapper.getContentType(),
                        ReplayHeaders.encode(
                                wrapper.getHeader(HttpHeaders.LOCATION), wrapper.getHeaders(HttpHeaders.WARNING)),
                        new String(wrapper.getContentAsByteArray(), StandardCharsets.UTF_8));
                stored = true;
            }
        } finally {
            if (!stored) {
                store.release(client, key);
            }
            wrapper.copyBodyToResponse();
        }
    }

    private static void replay(IdempotencyStore.Entry entry, HttpServletResponse response) throws IOException {
        response.setStatus(entry.status());
        response.setHeader(REPLAYED, "true");
        ReplayHeaders headers = ReplayHeaders.decode(entry.location());
        if (headers.location() != null) {
            response.setHeader(HttpHeaders.LOCATION, headers.location());
        }
        for (String warning : headers.warnings()) {
            response.addHeader(HttpHeaders.WARNING, warning);
        }
        if (entry.contentType() != null) {
            response.setContentType(entry.contentType());
        }
        if (entry.body() != null) {
            byte[] bytes = entry.body().getBytes(StandardCharsets.UTF_8);
            response.setContentLength(bytes.length);
            response.getOutputStream().write(bytes);
        }
    }

    static String parseKey(String header) {
        String key = header.trim();
        if (key.length() >= 2 && key.startsWith("\"") && key.endsWith("\"")) {
            key = key.substring(1, key.length() - 1);
        }
        if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
            return null;
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return null;
            }
        }
        return key;
    }

    private static String fingerprint(HttpServletRequest request, byte[] body) {
        byte[] head = (request.getMethod() + " " + request.getRequestURI() + "?"
                        + (request.getQueryString() == null ? "" : request.getQueryString()) + "\n")
                .getBytes(StandardCharsets.UTF_8);
        byte[] all = new byte[head.length + body.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(body, 0, all, head.length, body.length);
        return sha256Hex(all);
    }

    static String sha256Hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
