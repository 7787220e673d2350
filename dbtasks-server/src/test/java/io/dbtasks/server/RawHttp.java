package io.dbtasks.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A bare HTTP/1.1 client over a socket, so tests can send what {@code java.net.URI} and the usual
 * clients refuse to build: invalid {@code %}-encodings, raw bytes in the target, any {@code Host}.
 * One connection per request ({@code Connection: close}); chunked responses are decoded.
 */
final class RawHttp {
    private final int port;
    private int timeoutMillis = 60_000;
    private String localAddress;

    RawHttp timeout(int millis) {
        this.timeoutMillis = millis;
        return this;
    }

    /** @param address the loopback address to call from, such as {@code 127.0.0.7} */
    RawHttp from(String address) {
        this.localAddress = address;
        return this;
    }

    RawHttp(int port) {
        this.port = port;
    }

    record Response(int status, Map<String, List<String>> headers, byte[] bytes) {
        String header(String name) {
            List<String> v = headers.get(name.toLowerCase(Locale.ROOT));
            return v == null || v.isEmpty() ? null : v.get(0);
        }

        List<String> headers(String name) {
            return headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
        }

        String body() {
            return new String(bytes, StandardCharsets.UTF_8);
        }

        String contentType() {
            return header("content-type");
        }
    }

    static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    Response send(String method, String target, Map<String, String> headers, byte[] body) {
        return send(method, target.getBytes(StandardCharsets.UTF_8), headers, body);
    }

    /** As {@link #send(String, String, Map, byte[])} with the target's bytes as given (any bytes). */
    Response send(String method, byte[] target, Map<String, String> headers, byte[] body) {
        try (Socket socket = new Socket()) {
            if (localAddress != null) {
                socket.bind(new InetSocketAddress(localAddress, 0));
            }
            socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            socket.setSoTimeout(timeoutMillis);
            ByteArrayOutputStream req = new ByteArrayOutputStream();
            req.write((method + " ").getBytes(StandardCharsets.ISO_8859_1));
            req.write(target);
            req.write(" HTTP/1.1\r\n".getBytes(StandardCharsets.ISO_8859_1));
            Map<String, String> all = new LinkedHashMap<>();
            all.put("Host", "127.0.0.1:" + port);
            all.put("Connection", "close");
            if (body != null) {
                all.put("Content-Length", String.valueOf(body.length));
            }
            all.putAll(headers);
            for (Map.Entry<String, String> h : all.entrySet()) {
                if (h.getValue() != null) {
                    req.write((h.getKey() + ": " + h.getValue() + "\r\n").getBytes(StandardCharsets.UTF_8));
                }
            }
            req.write("\r\n".getBytes(StandardCharsets.ISO_8859_1));
            if (body != null) {
                req.write(body);
            }
            OutputStream out = socket.getOutputStream();
            try {
                out.write(req.toByteArray());
                out.flush();
            } catch (IOException e) {
                // The server may answer (413) and close before reading a large body; read what it said.
            }
            return read(socket.getInputStream());
        } catch (IOException e) {
            throw new IllegalStateException(
                    method + " " + abbreviate(new String(target, StandardCharsets.ISO_8859_1)) + ": " + e, e);
        }
    }

    private static String abbreviate(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    private static Response read(InputStream in) throws IOException {
        String statusLine = line(in);
        if (statusLine == null) {
            throw new IOException("connection closed without a response");
        }
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (String l = line(in); l != null && !l.isEmpty(); l = line(in)) {
            int c = l.indexOf(':');
            headers.computeIfAbsent(l.substring(0, c).trim().toLowerCase(Locale.ROOT), k -> new ArrayList<>())
                    .add(l.substring(c + 1).trim());
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        List<String> te = headers.getOrDefault("transfer-encoding", List.of());
        List<String> cl = headers.getOrDefault("content-length", List.of());
        if (te.stream().anyMatch(v -> v.equalsIgnoreCase("chunked"))) {
            while (true) {
                String size = line(in);
                if (size == null) {
                    break;
                }
                int n = Integer.parseInt(size.split(";")[0].trim(), 16);
                if (n == 0) {
                    line(in);
                    break;
                }
                body.write(in.readNBytes(n));
                line(in);
            }
        } else if (!cl.isEmpty()) {
            body.write(in.readNBytes(Integer.parseInt(cl.get(0))));
        } else {
            body.write(in.readAllBytes());
        }
        return new Response(status, headers, body.toByteArray());
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                byte[] bytes = b.toByteArray();
                int len = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
                return new String(bytes, 0, len, StandardCharsets.ISO_8859_1);
            }
            b.write(c);
        }
        return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
    }
}
