package io.dbtasks.server.web;

import io.dbtasks.StoredText;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.web.filter.OncePerRequestFilter;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.TokenStreamContext;
import tools.jackson.core.json.JsonFactory;

/**
 * Every JSON request body passes here before anything reads it, so each endpoint gets the same
 * checks whatever it binds the body to:
 *
 * <ul>
 *   <li>the body is UTF-8 (RFC 8259 section 8.1): a {@code charset} other than UTF-8 is 415, and
 *       bytes that are not strict UTF-8 (an overlong form such as {@code C0 AF} for {@code /}, a
 *       surrogate's encoding, a stray continuation byte, a UTF-16 or UTF-32 body) are 400, never
 *       decoded leniently into other characters;
 *   <li>no string value or property name holds what {@link StoredText} refuses (NUL, a lone surrogate
 *       escaped as {@code \ud800}): 400 naming the field by its path, such as {@code 'codes[0]'}.
 * </ul>
 *
 * <p>Malformed JSON is left to the endpoint, which says what is wrong with it. The body read here is
 * handed on, so it is read from the network once; its size is bounded by {@link
 * RequestValidationFilter}, which runs before.
 */
public class JsonBodyFilter extends OncePerRequestFilter {
    private static final JsonFactory JSON = JsonFactory.builder().build();

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        MediaType type = jsonType(request.getContentType());
        if (type == null) {
            chain.doFilter(request, response);
            return;
        }
        if (type.getParameter("charset") != null
                && !type.getParameter("charset").replace("\"", "").equalsIgnoreCase("utf-8")) {
            Problems.write(
                    response,
                    415,
                    "Unsupported Media Type",
                    "JSON bodies are accepted in UTF-8 only; send Content-Type: application/json (or with"
                            + " charset=utf-8) and encode the body as UTF-8");
            return;
        }
        byte[] body;
        try {
            body = request.getInputStream().readAllBytes();
        } catch (RequestValidationFilter.RequestTooLargeException e) {
            Problems.write(response, 413, "Content too large", e.getMessage());
            return;
        }
        String problem = problem(body);
        if (problem != null) {
            Problems.write(response, 400, "Bad request", problem);
            return;
        }
        chain.doFilter(new CachedBodyRequest(request, body), response);
    }

    private static MediaType jsonType(String contentType) {
        if (contentType == null) {
            return null;
        }
        try {
            MediaType type = MediaType.parseMediaType(contentType);
            boolean json = type.getSubtype().equals("json") || type.getSubtype().endsWith("+json");
            return json ? type : null;
        } catch (InvalidMediaTypeException e) {
            return null;
        }
    }

    /** @return what is wrong with the body's text, or {@code null} */
    static String problem(byte[] body) {
        String text = decodeStrictly(body);
        if (text == null) {
            return "The request body is not valid UTF-8 at byte " + badByte(body)
                    + " (an overlong or invalid sequence, or another encoding); send JSON encoded as UTF-8";
        }
        if (text.indexOf('\0') >= 0) {
            // JSON text never holds a raw NUL (RFC 8259): this is UTF-16 or UTF-32.
            return "The request body holds NUL bytes, so it is not UTF-8 JSON (UTF-16 or UTF-32?); send JSON encoded"
                    + " as UTF-8";
        }
        try (JsonParser p = JSON.createParser(ObjectReadContext.empty(), text)) {
            for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                if (t == JsonToken.PROPERTY_NAME) {
                    String bad = StoredText.problem(p.currentName());
                    if (bad != null) {
                        String where = path(p.streamReadContext().getParent());
                        return "A property name" + (where.isEmpty() ? "" : " in '" + Problems.quote(where) + "'") + " "
                                + bad;
                    }
                } else if (t == JsonToken.VALUE_STRING) {
                    String bad = StoredText.problem(p.getString());
                    if (bad != null) {
                        String where = path(p.streamReadContext());
                        return (where.isEmpty() ? "The request body" : "'" + Problems.quote(where) + "'") + " " + bad;
                    }
                }
            }
        } catch (JacksonException e) {
            // Malformed JSON: the endpoint's own reading says what is wrong.
        }
        return null;
    }

    /** @return the path of the current value, such as {@code payload.items[2].name} */
    private static String path(TokenStreamContext context) {
        Deque<String> parts = new ArrayDeque<>();
        for (TokenStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            if (c.inObject()) {
                parts.push("." + c.currentName());
            } else if (c.inArray()) {
                parts.push("[" + c.getCurrentIndex() + "]");
            }
        }
        String path = String.join("", parts);
        return path.startsWith(".") ? path.substring(1) : path;
    }

    private static String decodeStrictly(byte[] body) {
        CharsetDecoder decoder = decoder();
        CharBuffer out = CharBuffer.allocate(body.length);
        ByteBuffer in = ByteBuffer.wrap(body);
        CoderResult r = decoder.decode(in, out, true);
        if (r.isError()) {
            return null;
        }
        r = decoder.flush(out);
        if (r.isError()) {
            return null;
        }
        return out.flip().toString();
    }

    private static int badByte(byte[] body) {
        ByteBuffer in = ByteBuffer.wrap(body);
        decoder().decode(in, CharBuffer.allocate(body.length), true);
        return in.position();
    }

    private static CharsetDecoder decoder() {
        return StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
    }
}
