package io.dbtasks.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private MariaDB Galera cluster of a few nodes from the machine's own binaries (Debian's {@code
 * mariadb-server} and {@code galera-4}), each node a {@code mariadbd} with its own data directory
 * under a temporary directory and its own free ports for SQL, group communication, IST and SST.
 * Never the shared server: nothing here reads or writes its configuration. The first node bootstraps
 * the cluster ({@code --wsrep-new-cluster}); the others join it by SST ({@code rsync}); a node
 * killed with {@link #kill(int)} rejoins by IST on {@link #restart(int)}. {@link #close()} kills
 * every node and the processes they started (SST scripts, rsync), keeps the nodes' error logs under
 * {@code target/chaos/galera} and deletes the directory; a JVM
 * shutdown hook does the same if the test run ends without closing it.
 *
 * <p>As root the nodes run as user {@code mysql} (rsync's SST daemon would otherwise write as
 * {@code nobody}). User {@code root} without a password ({@code
 * --auth-root-authentication-method=normal}), on 127.0.0.1 only; not {@code skip-grant-tables}, under
 * which a stored function's empty definer does not replicate to the other nodes.
 */
final class GaleraCluster implements AutoCloseable {
    static final Path MARIADBD = Path.of("/usr/sbin/mariadbd");
    static final Path INSTALL_DB = Path.of("/usr/bin/mariadb-install-db");
    static final List<Path> PROVIDERS =
            List.of(Path.of("/usr/lib/galera/libgalera_smm.so"), Path.of("/usr/lib/libgalera_smm.so"));

    private final Path dir;
    private final Path provider;
    private final String database;
    private final List<Node> nodes = new ArrayList<>();
    private final Thread shutdownHook;

    /** One node: its ports, directory and process (null while it is down). */
    private static final class Node {
        final int index;
        final int sqlPort;
        final int groupPort;
        final int istPort;
        final int sstPort;
        final Path dir;
        volatile Process process;

        Node(int index, Path dir) throws IOException {
            this.index = index;
            this.dir = dir;
            this.sqlPort = ChaosFixtures.freePort();
            this.groupPort = ChaosFixtures.freePort();
            this.istPort = ChaosFixtures.freePort();
            this.sstPort = ChaosFixtures.freePort();
        }
    }

    private GaleraCluster(Path dir, Path provider, String database) {
        this.dir = dir;
        this.provider = provider;
        this.database = database;
        this.shutdownHook = new Thread(this::killAll, "galera-cluster-cleanup");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * @return why a cluster cannot run on this machine (a missing binary and the Debian package
     *     that brings it), or empty if it can
     */
    static Optional<String> unavailable() {
        if (!Files.isExecutable(MARIADBD) || !Files.isExecutable(INSTALL_DB)) {
            return Optional.of(MARIADBD + " or " + INSTALL_DB + " is missing (Debian package mariadb-server)");
        }
        if (PROVIDERS.stream().noneMatch(Files::isReadable)) {
            return Optional.of("no libgalera_smm.so under " + PROVIDERS + " (Debian package galera-4)");
        }
        if (Stream.of("rsync", "wsrep_sst_rsync")
                .anyMatch(b -> Stream.of("/usr/bin/", "/bin/").noneMatch(d -> Files.isExecutable(Path.of(d + b))))) {
            return Optional.of("rsync or wsrep_sst_rsync is missing (Debian packages rsync, mariadb-server)");
        }
        return Optional.empty();
    }

    /**
     * Starts {@code size} nodes: the first bootstraps, the others join by SST; returns once every
     * node is Synced and {@code database} exists.
     *
     * @param size nodes, at least 1
     * @param database a database to create (replicated to every node)
     * @return the running cluster
     * @throws Exception if a node does not start or sync within two minutes (the cluster is then
     *     closed)
     */
    static GaleraCluster start(int size, String database) throws Exception {
        // A free port is free when picked, not when the node binds it: another process (or an
        // outgoing connection's ephemeral port) may take it between the two, and the node then exits.
        // Such a start is thrown away and the cluster started afresh on new ports.
        for (int attempt = 1; ; attempt++) {
            try {
                return startOnce(size, database);
            } catch (IllegalStateException e) {
                if (attempt == START_ATTEMPTS) {
                    throw e;
                }
                System.out.println("chaos: Galera cluster start " + attempt + " of " + START_ATTEMPTS
                        + " failed, starting again on new ports: "
                        + e.getMessage().lines().findFirst().orElse(""));
            }
        }
    }

    /** Starts of a cluster {@link #start} makes before it gives up. */
    static final int START_ATTEMPTS = 3;

    private static GaleraCluster startOnce(int size, String database) throws Exception {
        Path dir = Files.createTempDirectory("dbtasks-galera-");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path provider = PROVIDERS.stream().filter(Files::isReadable).findFirst().orElseThrow();
        GaleraCluster cluster = new GaleraCluster(dir, provider, database);
        try {
            for (int i = 0; i < size; i++) {
                Path nodeDir = dir.resolve("n" + (i + 1));
                Files.createDirectories(nodeDir.resolve("data"));
                cluster.nodes.add(new Node(i, nodeDir));
            }
            for (Node n : cluster.nodes) {
                cluster.writeConfig(n);
            }
            if (ChaosFixtures.root()) {
                ChaosFixtures.run(List.of("chown", "-R", "mysql:mysql", dir.toString()));
            }
            Node first = cluster.nodes.get(0);
            List<String> install = new ArrayList<>(List.of(
                    INSTALL_DB.toString(),
                    "--defaults-file=" + first.dir.resolve("my.cnf"),
                    "--skip-test-db",
                    "--auth-root-authentication-method=normal"));
            if (ChaosFixtures.root()) {
                install.add("--user=mysql");
            }
            ChaosFixtures.run(install);
            cluster.launch(first, true);
            cluster.awaitSynced(first, TimeUnit.MINUTES.toNanos(2));
            try (Connection c = DriverManager.getConnection(cluster.url(0, ""));
                    Statement s = c.createStatement()) {
                s.execute("CREATE DATABASE " + database);
            }
            for (Node n : cluster.nodes.subList(1, size)) {
                cluster.launch(n, false);
                cluster.awaitSynced(n, TimeUnit.MINUTES.toNanos(2)); // one SST at a time
            }
            return cluster;
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
    }

    private void writeConfig(Node n) throws IOException {
        String members = nodes.stream()
                .map(m -> "127.0.0.1:" + m.groupPort)
                .reduce((a, b) -> a + "," + b)
                .orElseThrow();
        Files.writeString(
                n.dir.resolve("my.cnf"),
                String.join(
                        "\n",
                        "[mysqld]",
                        "datadir=" + n.dir.resolve("data"),
                        "socket=" + n.dir.resolve("mysqld.sock"),
                        "pid-file=" + n.dir.resolve("mysqld.pid"),
                        "log-error=" + n.dir.resolve("error.log"),
                        "port=" + n.sqlPort,
                        "bind-address=127.0.0.1",
                        ChaosFixtures.root() ? "user=mysql" : "",
                        "max_connections=300",
                        "performance_schema=OFF",
                        "innodb_buffer_pool_size=64M",
                        "innodb_log_file_size=32M",
                        // the cluster, not each node's fsync, makes a commit durable (Galera's advice)
                        "innodb_flush_log_at_trx_commit=2",
                        "binlog_format=ROW",
                        "default_storage_engine=InnoDB",
                        "innodb_autoinc_lock_mode=2",
                        "wsrep_on=ON",
                        "wsrep_provider=" + provider,
                        "wsrep_cluster_name=dbtasks_chaos",
                        "wsrep_cluster_address=gcomm://" + members,
                        "wsrep_node_name=n" + (n.index + 1),
                        "wsrep_node_address=127.0.0.1:" + n.groupPort,
                        "wsrep_provider_options=\"gmcast.listen_addr=tcp://127.0.0.1:" + n.groupPort
                                + ";ist.recv_addr=127.0.0.1:" + n.istPort + ";gcache.size=128M\"",
                        "wsrep_sst_method=rsync",
                        "wsrep_sst_receive_address=127.0.0.1:" + n.sstPort,
                        ""));
    }

    private void launch(Node n, boolean bootstrap) throws IOException {
        launch(n, bootstrap, null);
    }

    private void launch(Node n, boolean bootstrap, String startPosition) throws IOException {
        List<String> command =
                new ArrayList<>(List.of(MARIADBD.toString(), "--defaults-file=" + n.dir.resolve("my.cnf")));
        if (bootstrap) {
            command.add("--wsrep-new-cluster");
        }
        if (startPosition != null) {
            command.add("--wsrep_start_position=" + startPosition);
        }
        n.process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        n.dir.resolve("stdout.log").toFile()))
                .start();
    }

    private void awaitSynced(Node n, long timeoutNanos) throws Exception {
        long deadline = System.nanoTime() + timeoutNanos;
        while (!"Synced".equals(status(n.index, "wsrep_local_state_comment"))) {
            if (!n.process.isAlive()) {
                throw new IllegalStateException("Galera node n" + (n.index + 1) + " exited with "
                        + n.process.exitValue() + "; its log: " + tail(n.dir.resolve("error.log")));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Galera node n" + (n.index + 1) + " did not sync; its log: "
                        + tail(n.dir.resolve("error.log")));
            }
            Thread.sleep(100);
        }
    }

    /** @return the node's JDBC URL for {@code database} (0-based node index) */
    String url(int node, String database) {
        return "jdbc:mariadb://127.0.0.1:" + nodes.get(node).sqlPort + "/" + database + "?user=root";
    }

    /**
     * @return a URL naming every node, in order, in Connector/J's {@code sequential} mode: each new
     *     connection goes to the first node that accepts it (one writer node while it is up)
     */
    String sequentialUrl(String database) {
        return "jdbc:mariadb:sequential://"
                + nodes.stream()
                        .map(n -> "127.0.0.1:" + n.sqlPort)
                        .reduce((a, b) -> a + "," + b)
                        .orElseThrow()
                + "/" + database + "?user=root";
    }

    /** @return how many nodes the cluster was started with */
    int size() {
        return nodes.size();
    }

    /**
     * @return the node's global status variable {@code name}, or null while the node does not
     *     answer
     */
    String status(int node, String name) {
        try (Connection c = DriverManager.getConnection(url(node, "") + "&connectTimeout=1000&socketTimeout=2000");
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE '" + name + "'")) {
            return rs.next() ? rs.getString(2) : null;
        } catch (SQLException e) {
            return null;
        }
    }

    /**
     * @return the sum over the nodes that answer of the numeric global status variable {@code
     *     name} (such as {@code wsrep_local_cert_failures})
     */
    long sum(String name) {
        long total = 0;
        for (int i = 0; i < nodes.size(); i++) {
            String v = status(i, name);
            total += v == null ? 0 : Long.parseLong(v);
        }
        return total;
    }

    /** Kills the node's mariadbd with {@code SIGKILL} and waits until it is gone. */
    void kill(int node) throws InterruptedException {
        Node n = nodes.get(node);
        Process p = n.process;
        if (p != null) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            n.process = null;
        }
    }

    /**
     * Starts a killed node again, after recovering its position from its storage ({@code
     * --wsrep-recover}), and waits until it is Synced: it rejoins by IST when the others' gcache still
     * holds what it missed.
     *
     * @return milliseconds from the start to Synced
     * @throws Exception if it does not sync within two minutes
     */
    long restart(int node) throws Exception {
        Node n = nodes.get(node);
        long start = System.nanoTime();
        // As the packaged service does (galera_recovery): after a crash the node's saved position is
        // unknown, and without it the node would rejoin by a full SST instead of IST.
        String position = recoverPosition(n);
        launch(n, false, position);
        awaitSynced(n, TimeUnit.MINUTES.toNanos(2));
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    /** How long one {@code --wsrep-recover} run may take to log the node's position. */
    static final Duration RECOVER_TIMEOUT = Duration.ofSeconds(40);

    /** {@code --wsrep-recover} runs per restart at most. */
    static final int RECOVER_ATTEMPTS = 2;

    /**
     * Runs {@code mariadbd --wsrep-recover} on the node's storage and returns the position it logs.
     * A recovery run can log its position and then not exit (it has opened its SQL port by then), so
     * it is stopped once the position is logged rather than waited for; one that logs nothing within
     * {@link #RECOVER_TIMEOUT} is killed and run again.
     *
     * @return the recovered position ({@code uuid:seqno}), or {@code null} if the run exited without one
     * @throws IOException if no run logged a position or exited within its time
     */
    private String recoverPosition(Node n) throws IOException, InterruptedException {
        Path recoverLog = n.dir.resolve("recover.log");
        for (int attempt = 1; ; attempt++) {
            killStrays(n);
            Files.deleteIfExists(recoverLog);
            Process p = new ProcessBuilder(
                            MARIADBD.toString(),
                            "--defaults-file=" + n.dir.resolve("my.cnf"),
                            "--wsrep-recover",
                            "--log-error=" + recoverLog)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            long deadline = System.nanoTime() + RECOVER_TIMEOUT.toNanos();
            Integer exit = null;
            try {
                while (System.nanoTime() < deadline) {
                    String position = loggedPosition(recoverLog);
                    if (position != null) {
                        return position;
                    }
                    if (!p.isAlive()) {
                        exit = p.exitValue();
                        if (exit == 0) {
                            return loggedPosition(recoverLog);
                        }
                        break;
                    }
                    Thread.sleep(100);
                }
            } finally {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
            }
            String detail = "--wsrep-recover of node n" + (n.index + 1)
                    + (exit == null
                            ? " logged no position in " + RECOVER_TIMEOUT.toSeconds() + " s"
                            : " exited with " + exit)
                    + "; its log: " + tail(recoverLog);
            if (attempt == RECOVER_ATTEMPTS) {
                throw new IOException(detail);
            }
            log(detail + "; running it again");
        }
    }

    /** @return the last position a recovery run logged, or {@code null} */
    private static String loggedPosition(Path recoverLog) throws IOException {
        if (!Files.exists(recoverLog)) {
            return null;
        }
        return Files.readAllLines(recoverLog).stream()
                .map(l -> l.replaceFirst(".*WSREP: Recovered position: ", ""))
                .filter(l -> l.matches("[0-9a-f-]{36}:-?[0-9]+"))
                .reduce((a, b) -> b)
                .orElse(null);
    }

    /**
     * Kills every process still started with the node's configuration (a recovery run that was cut
     * short, or a killed server's helpers), and waits until they are gone: one that holds the node's
     * InnoDB files makes a recovery wait for them.
     */
    private static void killStrays(Node n) throws InterruptedException {
        String config = "--defaults-file=" + n.dir.resolve("my.cnf");
        List<ProcessHandle> strays = ProcessHandle.allProcesses()
                .filter(p -> p.pid() != ProcessHandle.current().pid())
                .filter(p -> p.info().commandLine().map(c -> c.contains(config)).orElse(false))
                .toList();
        for (ProcessHandle p : strays) {
            log("Galera node n" + (n.index + 1) + ": killing stray process " + p.pid() + " "
                    + p.info().commandLine().orElse(""));
            p.destroyForcibly();
        }
        for (ProcessHandle p : strays) {
            try {
                p.onExit().get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                log("Galera node n" + (n.index + 1) + ": process " + p.pid() + " still there: " + e);
            }
        }
    }

    /**
     * Makes the cluster whole before a test: an earlier one may have killed a node that did not come
     * back, and a pool on a node that is down waits out its connection timeout on every call. Waits
     * up to {@link #SETTLE} until every node has {@linkplain #joined joined}; a node that has not is
     * killed and {@linkplain #restart started again}. If one does not come back, or no node is left
     * Synced in the primary component to rejoin, this cluster is closed and a new one {@linkplain
     * #start started} in its place: on new ports, its database created again, empty.
     *
     * @return this cluster, every node joined; or the new one
     * @throws Exception if the new cluster does not start either
     */
    GaleraCluster whole() throws Exception {
        if (settled(SETTLE)) {
            return this;
        }
        try {
            List<Node> lost = nodes.stream().filter(n -> !synced(n)).toList();
            if (lost.size() == nodes.size()) {
                throw new IllegalStateException("no node is Synced in the primary component");
            }
            for (Node n : lost) {
                log("Galera node n" + (n.index + 1) + " is " + describe(n) + "; starting it again");
                kill(n.index);
                log("Galera node n" + (n.index + 1) + " Synced " + restart(n.index) + " ms after its restart");
            }
            if (!settled(SETTLE)) {
                throw new IllegalStateException("nodes not joined after their restart: "
                        + nodes.stream()
                                .filter(n -> !joined(n))
                                .map(n -> "n" + (n.index + 1) + " " + describe(n))
                                .toList());
            }
            return this;
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            log("Galera cluster not whole, starting a new cluster: " + e);
            close();
            return start(nodes.size(), database);
        }
    }

    /** How long {@link #whole} waits for the nodes to join before it starts one again. */
    static final Duration SETTLE = Duration.ofSeconds(30);

    /**
     * @return whether every node {@linkplain #joined joined} within {@code timeout}; false at once
     *     when a node's process is gone (it does not come back by itself)
     */
    private boolean settled(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!nodes.stream().allMatch(this::joined)) {
            if (System.nanoTime() > deadline || nodes.stream().anyMatch(GaleraCluster::down)) {
                return false;
            }
            Thread.sleep(200);
        }
        return true;
    }

    private static boolean down(Node n) {
        Process p = n.process;
        return p == null || !p.isAlive();
    }

    /** @return whether the node runs and is Synced in the primary component, of however many nodes */
    private boolean synced(Node n) {
        return !down(n)
                && "Synced".equals(status(n.index, "wsrep_local_state_comment"))
                && "Primary".equals(status(n.index, "wsrep_cluster_status"));
    }

    /** @return whether the node is {@linkplain #synced synced} in a component of every node */
    private boolean joined(Node n) {
        return synced(n) && String.valueOf(nodes.size()).equals(status(n.index, "wsrep_cluster_size"));
    }

    /** @return the node's state for the log: down, or its local state, component and cluster size */
    private String describe(Node n) {
        Process p = n.process;
        if (p == null) {
            return "down";
        }
        if (!p.isAlive()) {
            return "down (exited with " + p.exitValue() + ")";
        }
        return "up, " + status(n.index, "wsrep_local_state_comment") + " in a "
                + status(n.index, "wsrep_cluster_status") + " component of "
                + status(n.index, "wsrep_cluster_size");
    }

    private static void log(String message) {
        System.out.println("chaos: " + message);
    }

    /** @return how the node last joined: the lines of its error log that name IST or SST */
    List<String> transferLines(int node) throws IOException {
        try (Stream<String> lines = Files.lines(nodes.get(node).dir.resolve("error.log"))) {
            return lines.filter(l -> l.contains("IST received") || l.contains("SST received"))
                    .toList();
        }
    }

    @Override
    public void close() {
        killAll();
        try {
            Path logs = Files.createDirectories(Path.of("target", "chaos", "galera"));
            for (Node n : nodes) {
                Path log = n.dir.resolve("error.log");
                if (Files.exists(log)) {
                    Files.copy(
                            log,
                            logs.resolve("n" + (n.index + 1) + "-error.log"),
                            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        } catch (IOException e) {
            // the logs are a courtesy
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }

    private void killAll() {
        for (Node n : nodes) {
            try {
                kill(n.index);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
