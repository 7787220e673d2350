package io.dbtasks.redis;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * A {@code redis-server} of the test's own, on a free port, without persistence, so a test can kill
 * it, restart it empty on the same port, or freeze it ({@code DEBUG SLEEP}). Never the shared Redis.
 * Its directory is deleted on {@link #close()}.
 */
final class OwnRedisServer implements AutoCloseable {
    static final Path BINARY = Path.of(System.getProperty("dbtasks.test.redis-server", "/usr/bin/redis-server"));

    private final int port;
    private final Path dir;
    private final List<String> options;
    private Process process;

    private OwnRedisServer(int port, Path dir, List<String> options) {
        this.port = port;
        this.dir = dir;
        this.options = options;
    }

    /** Starts one, or skips the calling test with the reason if {@code redis-server} is missing. */
    static OwnRedisServer start() throws IOException, InterruptedException {
        return start(List.of());
    }

    /**
     * Starts a replica of {@code primary} ({@code --replicaof}), or skips as {@link #start()} does.
     */
    static OwnRedisServer replicaOf(OwnRedisServer primary) throws IOException, InterruptedException {
        return start(List.of("--replicaof", "127.0.0.1", String.valueOf(primary.port)));
    }

    private static OwnRedisServer start(List<String> options) throws IOException, InterruptedException {
        Assumptions.assumeTrue(
                Files.isExecutable(BINARY),
                "redis-server is not at " + BINARY + " (-Ddbtasks.test.redis-server=...); the Redis failure"
                        + " tests start, kill and restart their own and are skipped without it");
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        OwnRedisServer server = new OwnRedisServer(port, Files.createTempDirectory("dbtasks-redis-"), options);
        server.up();
        return server;
    }

    String url() {
        return "redis://127.0.0.1:" + port;
    }

    /** Starts the server (empty) and waits until it accepts connections. */
    void up() throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                BINARY.toString(),
                "--port",
                String.valueOf(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--enable-debug-command",
                "yes",
                "--dir",
                dir.toString()));
        command.addAll(options);
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile())
                .start();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline || !process.isAlive()) {
                    throw new IllegalStateException("redis-server did not start on port " + port, notYet);
                }
                Thread.sleep(20);
            }
        }
    }

    /** Kills the server: Redis is down, and its data is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly().waitFor();
    }

    /** Makes the server unresponsive for {@code seconds} ({@code DEBUG SLEEP}); returns at once. */
    void freeze(int seconds) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            OutputStream out = s.getOutputStream();
            out.write(("DEBUG SLEEP " + seconds + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Thread.sleep(50); // let the server read it before the socket closes
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Kills the server and deletes its directory. */
    @Override
    public void close() throws InterruptedException {
        if (process != null) {
            kill();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: a temporary directory
        }
    }
}
