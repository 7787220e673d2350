package io.dbtasks.chaos;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private PostgreSQL primary with a synchronous (or asynchronous) standby, from the machine's own PostgreSQL
 * binaries ({@code /usr/lib/postgresql/<version>/bin}, Debian's packages), on free ports under a
 * temporary directory; run as user {@code postgres} when the JVM is root. Never the shared server.
 * {@link #crashPrimary()} kills the primary's postmaster with {@code SIGKILL}; {@link #promote()}
 * promotes the standby; {@link #stopStandby()} and {@link #startStandby()} let the primary commit
 * what the standby never receives (asynchronous pairs only: a synchronous primary would wait).
 */
final class StandbyPair implements AutoCloseable {
    private final Path bin;
    private final Path dir;
    private final int primaryPort;
    private final int standbyPort;

    private StandbyPair(Path bin, Path dir, int primaryPort, int standbyPort) {
        this.bin = bin;
        this.dir = dir;
        this.primaryPort = primaryPort;
        this.standbyPort = standbyPort;
    }

    /** @return the newest {@code /usr/lib/postgresql/<version>/bin} with pg_ctl and pg_basebackup */
    static Optional<Path> binaries() {
        Path root = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(root)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(root)) {
            return versions.map(v -> v.resolve("bin"))
                    .filter(b ->
                            Files.isExecutable(b.resolve("pg_ctl")) && Files.isExecutable(b.resolve("pg_basebackup")))
                    .max(Comparator.comparing(Path::toString));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    static StandbyPair start(Path bin, String database) throws Exception {
        return start(bin, database, true);
    }

    /**
     * Starts a primary and a streaming standby.
     *
     * @param synchronous whether every commit waits for the standby; when false, replication is
     *     asynchronous and the call returns once the standby streams
     */
    static StandbyPair start(Path bin, String database, boolean synchronous) throws Exception {
        Path dir = Files.createTempDirectory("dbtasks-failover-");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        if (root()) {
            run(List.of("chown", "postgres:postgres", dir.toString()), false);
        }
        StandbyPair pair = new StandbyPair(bin, dir, freePort(), freePort());
        Path primary = dir.resolve("primary");
        run(
                List.of(
                        bin.resolve("initdb").toString(),
                        "-D",
                        primary.toString(),
                        "-U",
                        "postgres",
                        "-A",
                        "trust",
                        "-E",
                        "UTF8",
                        "--locale=C",
                        "--no-sync"),
                true);
        Files.writeString(
                primary.resolve("postgresql.auto.conf"),
                String.join(
                        "\n",
                        "listen_addresses = '127.0.0.1'",
                        "unix_socket_directories = '" + dir + "'",
                        "wal_level = replica",
                        "max_wal_senders = 5",
                        "max_connections = 200",
                        "synchronous_commit = on",
                        "hot_standby = on",
                        ""),
                java.nio.file.StandardOpenOption.APPEND);
        pair.pgCtl("start", primary, pair.primaryPort);
        try (Connection c = DriverManager.getConnection(pair.url(pair.primaryPort, "postgres"));
                Statement s = c.createStatement()) {
            s.executeUpdate("CREATE DATABASE " + database);
        }
        Path standby = dir.resolve("standby");
        run(
                List.of(
                        bin.resolve("pg_basebackup").toString(),
                        "-h",
                        "127.0.0.1",
                        "-p",
                        String.valueOf(pair.primaryPort),
                        "-U",
                        "postgres",
                        "-D",
                        standby.toString(),
                        "-R",
                        "-X",
                        "stream",
                        "-c",
                        "fast", // a spread checkpoint before the copy would take minutes
                        "--no-sync"),
                true);
        Files.writeString(
                standby.resolve("postgresql.auto.conf"),
                "cluster_name = 'standby1'\n",
                java.nio.file.StandardOpenOption.APPEND);
        pair.pgCtl("start", standby, pair.standbyPort);
        if (!synchronous) {
            pair.awaitStreaming();
            return pair;
        }
        // synchronous only now: set before the standby exists, every commit would wait for it
        try (Connection c = DriverManager.getConnection(pair.url(pair.primaryPort, "postgres"));
                Statement s = c.createStatement()) {
            s.execute("ALTER SYSTEM SET synchronous_standby_names = 'standby1'");
            s.execute("SELECT pg_reload_conf()");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!pair.synchronous()) {
            if (System.nanoTime() > deadline) {
                pair.close();
                throw new IllegalStateException("the standby did not become synchronous within 60 s");
            }
            Thread.sleep(200);
        }
        return pair;
    }

    /**
     * @return the multi-host URL: primary first, then standby, {@code targetServerType=primary}, and
     *     {@code hostRecheckSeconds=2}: pgjdbc remembers a host's role for that long (default 10 s),
     *     so with the default a standby seen as secondary just before its promotion is skipped for
     *     up to 10 s after it
     */
    String multiHostUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + primaryPort + ",127.0.0.1:" + standbyPort + "/" + database
                + "?user=postgres&targetServerType=primary&hostRecheckSeconds=2&connectTimeout=2&socketTimeout=10";
    }

    private String url(int port, String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=postgres";
    }

    private boolean synchronous() {
        try (Connection c = DriverManager.getConnection(url(primaryPort, "postgres"));
                Statement s = c.createStatement();
                ResultSet rs =
                        s.executeQuery("SELECT COUNT(*) FROM pg_stat_replication WHERE application_name = 'standby1'"
                                + " AND sync_state = 'sync'")) {
            rs.next();
            return rs.getLong(1) == 1;
        } catch (SQLException e) {
            return false;
        }
    }

    /** Waits until the standby streams from the primary, up to 60 s. */
    void awaitStreaming() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try (Connection c = DriverManager.getConnection(url(primaryPort, "postgres"));
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM pg_stat_replication"
                            + " WHERE application_name = 'standby1' AND state = 'streaming'")) {
                rs.next();
                if (rs.getLong(1) == 1) {
                    return;
                }
            } catch (SQLException e) {
                // not yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the standby did not stream within 60 s");
            }
            Thread.sleep(100);
        }
    }

    /** Waits until the standby has replayed everything the primary wrote so far, up to 60 s. */
    void awaitReplayed() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (Connection c = DriverManager.getConnection(url(primaryPort, "postgres"));
                Statement s = c.createStatement()) {
            String target;
            try (ResultSet rs = s.executeQuery("SELECT pg_current_wal_lsn()::text")) {
                rs.next();
                target = rs.getString(1);
            }
            while (true) {
                try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM pg_stat_replication WHERE application_name"
                        + " = 'standby1' AND replay_lsn >= '" + target + "'::pg_lsn")) {
                    rs.next();
                    if (rs.getLong(1) == 1) {
                        return;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the standby did not replay up to " + target + " within 60 s");
                }
                Thread.sleep(100);
            }
        }
    }

    /** Stops the standby (fast shutdown): from now on the primary commits what it never receives. */
    void stopStandby() throws Exception {
        run(
                List.of(
                        bin.resolve("pg_ctl").toString(),
                        "stop",
                        "-D",
                        dir.resolve("standby").toString(),
                        "-m",
                        "fast",
                        "-w"),
                true);
    }

    /** Starts the stopped standby again (still a standby; its primary may be gone). */
    void startStandby() throws Exception {
        pgCtl("start", dir.resolve("standby"), standbyPort);
    }

    /**
     * @param primary the primary's URL if true, else the standby's
     * @return a single-host URL to {@code database} on that server
     */
    String url(boolean primary, String database) {
        return url(primary ? primaryPort : standbyPort, database);
    }

    /** Kills the primary's postmaster with SIGKILL (its backends exit when they notice). */
    void crashPrimary() throws Exception {
        String pid = Files.readAllLines(dir.resolve("primary").resolve("postmaster.pid"))
                .get(0)
                .trim();
        run(List.of("kill", "-9", pid), false); // its backends notice the postmaster's death and exit
    }

    /** Promotes the standby and waits until it accepts writes. */
    void promote() throws Exception {
        run(
                List.of(
                        bin.resolve("pg_ctl").toString(),
                        "promote",
                        "-D",
                        dir.resolve("standby").toString(),
                        "-w"),
                true);
    }

    @Override
    public void close() {
        for (String node : List.of("primary", "standby")) {
            try {
                run(
                        List.of(
                                bin.resolve("pg_ctl").toString(),
                                "stop",
                                "-D",
                                dir.resolve(node).toString(),
                                "-m",
                                "immediate"),
                        true,
                        true);
            } catch (Exception e) {
                // not running
            }
        }
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }

    private void pgCtl(String action, Path data, int port) throws Exception {
        run(
                List.of(
                        bin.resolve("pg_ctl").toString(),
                        action,
                        "-D",
                        data.toString(),
                        "-w",
                        "-t",
                        "120",
                        "-l",
                        data.resolve("postgres.log").toString(),
                        "-o",
                        "-p " + port),
                true);
    }

    private static void run(List<String> command, boolean asPostgres) throws Exception {
        run(command, asPostgres, false);
    }

    private static void run(List<String> command, boolean asPostgres, boolean ignoreFailure) throws Exception {
        List<String> c = new ArrayList<>();
        if (asPostgres && root()) {
            c.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        c.addAll(command);
        Path log = Files.createTempFile("dbtasks-failover-cmd-", ".log");
        try {
            Process p = new ProcessBuilder(c)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            if (!p.waitFor(180, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(c + " did not finish: " + Files.readString(log));
            }
            if (p.exitValue() != 0 && !ignoreFailure) {
                throw new IOException(c + " exited with " + p.exitValue() + ": " + Files.readString(log));
            }
        } finally {
            Files.deleteIfExists(log);
        }
    }

    private static boolean root() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
