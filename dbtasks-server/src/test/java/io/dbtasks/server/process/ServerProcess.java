package io.dbtasks.server.process;

import io.dbtasks.server.DbTasksServerApplication;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The server in a JVM of its own, started as {@code java -cp <test class path>
 * DbTasksServerApplication} in a working directory of the test's choosing (so the default H2 URL,
 * {@code ./data/dbtasks}, lands there), with the admin password {@value #PASSWORD}. Its output goes
 * to {@code server-N.log} in that directory. {@link #terminate} sends SIGTERM (a normal shutdown),
 * {@link #kill} SIGKILL (a crash).
 */
public final class ServerProcess implements AutoCloseable {
    /** The admin's password. */
    public static final String PASSWORD = "change-me";

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Process process;
    private final Path log;
    private final int port;

    private ServerProcess(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    /**
     * Starts the server and waits until {@code /actuator/health} answers.
     *
     * @param dir the working directory
     * @param name the log file's name
     * @param args Spring Boot arguments beyond the port
     * @return the running server
     */
    public static ServerProcess start(Path dir, String name, String... args) throws Exception {
        int port = freePort();
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<String> command = new ArrayList<>(List.of(
                java, "-Xmx384m", "-cp", classpath, DbTasksServerApplication.class.getName(), "--server.port=" + port));
        command.addAll(List.of(args));
        Path log = dir.resolve(name + ".log");
        ProcessBuilder pb = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("DBTASKS_SERVER_SECURITY_ADMIN_PASSWORD", PASSWORD);
        ServerProcess server = new ServerProcess(pb.start(), log, port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
            if (!server.process.isAlive()) {
                throw new AssertionError("the server exited with " + server.process.exitValue() + ":\n" + server.log());
            }
            try {
                if (server.get("/actuator/health").statusCode() == 200) {
                    return server;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(250);
        }
        server.close();
        throw new AssertionError("the server did not start within 120 s:\n" + server.log());
    }

    /** @return the port it listens on */
    public int port() {
        return port;
    }

    /** @return its process id */
    public long pid() {
        return process.pid();
    }

    /** @return everything it printed so far */
    public String log() throws IOException {
        return Files.readString(log, StandardCharsets.UTF_8);
    }

    /** A GET as admin. */
    public HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HTTP.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A POST of JSON as admin, with extra headers (name, value, ...). */
    public HttpResponse<String> post(String path, String json, String... headers)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = request(path)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest.Builder request(String path) {
        String auth = Base64.getEncoder().encodeToString(("admin:" + PASSWORD).getBytes(StandardCharsets.UTF_8));
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", "Basic " + auth);
    }

    /**
     * Sends SIGTERM and waits for the process to exit.
     *
     * @return its exit code
     */
    public int terminate(Duration timeout) throws Exception {
        process.destroy();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("the server did not stop within " + timeout + " of SIGTERM:\n" + log());
        }
        return process.exitValue();
    }

    /** Sends SIGKILL and waits for the process to be gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return the headers of a map, flattened for {@link #post} */
    public static String[] headers(Map<String, String> headers) {
        return headers.entrySet().stream()
                .flatMap(e -> java.util.stream.Stream.of(e.getKey(), e.getValue()))
                .toArray(String[]::new);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
