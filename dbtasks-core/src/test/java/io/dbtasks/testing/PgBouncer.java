package io.dbtasks.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A private PgBouncer (Debian's {@code pgbouncer}) in front of the test PostgreSQL, started on a
 * free port with a generated configuration and stopped by {@link #close()}. Never the shared
 * server's configuration: each instance has its own directory, log and pid file, deleted on close.
 */
public final class PgBouncer implements AutoCloseable {
    private static final List<String> BINARIES = List.of("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer");

    private final Process process;
    private final Path dir;
    private final String listenAddress;
    private final int port;
    private final String database;
    private final String user;

    private PgBouncer(Process process, Path dir, String listenAddress, int port, String database, String user) {
        this.process = process;
        this.dir = dir;
        this.listenAddress = listenAddress;
        this.port = port;
        this.database = database;
        this.user = user;
    }

    /** @return the pgbouncer binary, if this machine has one */
    public static Optional<Path> binary() {
        return BINARIES.stream().map(Path::of).filter(Files::isExecutable).findFirst();
    }

    /**
     * Starts PgBouncer in {@code poolMode} ({@code transaction} or {@code session}) in front of the
     * PostgreSQL at {@code postgresJdbcUrl}, with PgBouncer's defaults otherwise.
     *
     * @param postgresJdbcUrl the server's plain JDBC URL ({@code jdbc:postgresql://host:port/db?user=u})
     * @param poolMode PgBouncer's {@code pool_mode}
     * @param poolSize server connections per database and user ({@code default_pool_size})
     * @return the running PgBouncer, accepting connections
     * @throws IOException if it cannot be started or does not listen within 10 s
     */
    public static PgBouncer start(String postgresJdbcUrl, String poolMode, int poolSize) throws IOException {
        return start(postgresJdbcUrl, poolMode, poolSize, "127.0.0.1", freePort(), List.of());
    }

    /**
     * Starts PgBouncer as {@link #start(String, String, int)} does, on a chosen address and port
     * (another loopback address can serve the same port number as the server, as a sidecar does).
     *
     * @param postgresJdbcUrl the server's plain JDBC URL ({@code jdbc:postgresql://host:port/db?user=u})
     * @param poolMode PgBouncer's {@code pool_mode}
     * @param poolSize server connections per database and user ({@code default_pool_size})
     * @param listenAddress the address to listen on ({@code 127.0.0.2}, ...)
     * @param port the port to listen on
     * @param settings further {@code name = value} lines of the {@code [pgbouncer]} section
     * @return the running PgBouncer, accepting connections
     * @throws IOException if it cannot be started or does not listen within 10 s
     */
    public static PgBouncer start(
            String postgresJdbcUrl,
            String poolMode,
            int poolSize,
            String listenAddress,
            int port,
            List<String> settings)
            throws IOException {
        Path bin = binary().orElseThrow(() -> new IOException("pgbouncer is not installed"));
        URI uri = URI.create(postgresJdbcUrl.substring("jdbc:".length()));
        String database = uri.getPath().substring(1);
        String user = queryParam(uri, "user").orElse("postgres");
        Path dir = Files.createTempDirectory("dbtasks-pgbouncer-");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path users = dir.resolve("users.txt");
        Files.writeString(users, "\"" + user + "\" \"\"\n");
        Path ini = dir.resolve("pgbouncer.ini");
        Files.writeString(
                ini,
                String.join(
                        "\n",
                        "[databases]",
                        "* = host=" + uri.getHost() + " port=" + (uri.getPort() < 0 ? 5432 : uri.getPort()),
                        "[pgbouncer]",
                        "listen_addr = " + listenAddress,
                        "listen_port = " + port,
                        "unix_socket_dir =",
                        "auth_type = trust",
                        "auth_file = " + users,
                        "pool_mode = " + poolMode,
                        "default_pool_size = " + poolSize,
                        "max_client_conn = 1000",
                        "logfile = " + dir.resolve("pgbouncer.log"),
                        "pidfile = " + dir.resolve("pgbouncer.pid"),
                        String.join("\n", settings),
                        ""),
                StandardCharsets.UTF_8);
        for (Path p : List.of(users, ini)) {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-rw-rw-"));
        }
        List<String> command = new ArrayList<>(List.of(bin.toString()));
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("-u", "postgres")); // PgBouncer refuses to run as root
        }
        command.add(ini.toString());
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("stdout.log").toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                String out = Files.readString(dir.resolve("stdout.log"));
                OwnPostgres.deleteRecursively(dir);
                throw new IOException("pgbouncer exited with " + p.exitValue() + ": " + out);
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(listenAddress, port), 200);
                return new PgBouncer(p, dir, listenAddress, port, database, user);
            } catch (IOException notYet) {
                sleep(50);
            }
        }
        p.destroyForcibly();
        OwnPostgres.deleteRecursively(dir);
        throw new IOException("pgbouncer did not listen on " + listenAddress + ":" + port + " within 10 s");
    }

    /**
     * @return the installed PgBouncer's version as {@code {major, minor}}, or {@code {0, 0}} if it
     *     cannot be read
     */
    public static int[] version() {
        Optional<Path> bin = binary();
        if (bin.isEmpty()) {
            return new int[] {0, 0};
        }
        try {
            Process p = new ProcessBuilder(bin.get().toString(), "--version")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(10, TimeUnit.SECONDS);
            java.util.regex.Matcher m =
                    java.util.regex.Pattern.compile("PgBouncer (\\d+)\\.(\\d+)").matcher(out);
            return m.find() ? new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))} : new int[] {0, 0};
        } catch (IOException e) {
            return new int[] {0, 0};
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new int[] {0, 0};
        }
    }

    /** @return the plain JDBC URL of the test database through this PgBouncer, no extra options */
    public String jdbcUrl() {
        return "jdbc:postgresql://" + listenAddress + ":" + port + "/" + database + "?user=" + user;
    }

    /** @return the directory with the configuration and log, deleted by {@link #close()} */
    public Path dir() {
        return dir;
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        OwnPostgres.deleteRecursively(dir);
    }

    private static Optional<String> queryParam(URI uri, String name) {
        String q = uri.getQuery();
        if (q == null) {
            return Optional.empty();
        }
        for (String kv : q.split("&")) {
            int eq = kv.indexOf('=');
            if (eq > 0 && kv.substring(0, eq).equals(name)) {
                return Optional.of(kv.substring(eq + 1));
            }
        }
        return Optional.empty();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
