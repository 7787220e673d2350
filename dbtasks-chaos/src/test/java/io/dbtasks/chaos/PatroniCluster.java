package io.dbtasks.chaos;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * A private PostgreSQL cluster under Patroni: a three-member etcd (Debian's {@code etcd-server}) and
 * {@code members} PostgreSQL members, each run by its own Patroni (Debian's {@code patroni}) from the
 * machine's PostgreSQL binaries, all on free ports under a temporary directory; Patroni and PostgreSQL
 * run as user {@code postgres} when the JVM is root. Never the shared server.
 *
 * <p>Patroni's timing is shortened so that a failover takes seconds: {@code ttl} 8 s, {@code
 * loop_wait} 1 s, {@code retry_timeout} 3 s, {@code primary_start_timeout} 0 (a crashed leader fails
 * over at once instead of recovering in place), {@code maximum_lag_on_failover} 1 GB (a lagging
 * replica is promoted anyway, so that asynchronous replication shows what it loses).
 *
 * <p>{@link #close()} kills with {@code SIGKILL} every process whose command line names the cluster's
 * directory or its scope (etcd, Patroni, every PostgreSQL process, whose titles carry the scope as
 * {@code cluster_name}), waits until they are gone, and deletes the directory; a JVM shutdown hook
 * does the same if the JVM exits without closing. Not thread-safe: one test drives it.
 */
final class PatroniCluster implements AutoCloseable {
    private static final Path PATRONI = Path.of("/usr/bin/patroni");
    private static final Path PATRONICTL = Path.of("/usr/bin/patronictl");
    private static final Path ETCD = Path.of("/usr/bin/etcd");

    /** A PostgreSQL member: its name, PostgreSQL port, REST API port and directory. */
    record Member(String name, int port, int restPort, Path dir) {
        Path config() {
            return dir.resolveSibling(name + ".yml");
        }

        Path data() {
            return dir.resolve("data");
        }
    }

    private final Path bin;
    private final Path dir;
    private final String scope;
    private final List<Integer> etcdClientPorts = new ArrayList<>();
    private final List<Member> members = new ArrayList<>();
    private final List<Process> processes = new ArrayList<>();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private final Thread shutdownHook;
    private volatile boolean closed;

    private PatroniCluster(Path bin, Path dir) {
        this.bin = bin;
        this.dir = dir;
        this.scope = "dbtasks-chaos-" + UUID.randomUUID().toString().substring(0, 8);
        this.shutdownHook = new Thread(this::killAll, "patroni-cluster-cleanup");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * @return why the cluster cannot run here (a missing package), or empty if it can
     */
    static Optional<String> unavailable() {
        if (StandbyPair.binaries().isEmpty()) {
            return Optional.of("no PostgreSQL binaries under /usr/lib/postgresql/*/bin (Debian package postgresql)");
        }
        if (!Files.isExecutable(PATRONI) || !Files.isExecutable(PATRONICTL)) {
            return Optional.of("patroni is not installed (Debian package patroni)");
        }
        if (!Files.isExecutable(ETCD)) {
            return Optional.of("etcd is not installed (Debian package etcd-server)");
        }
        return Optional.empty();
    }

    /**
     * Starts etcd and the members, waits until one member leads and every other streams from it,
     * and creates {@code database}.
     *
     * @param members PostgreSQL members, 2 or 3
     * @param database a database to create
     * @param synchronous Patroni's {@code synchronous_mode} at bootstrap
     * @return the running cluster; on failure nothing is left running
     * @throws Exception if it does not come up within 120 s
     */
    static PatroniCluster start(int members, String database, boolean synchronous) throws Exception {
        if (members < 2 || members > 3) {
            throw new IllegalArgumentException("members must be 2 or 3, was " + members);
        }
        Path dir = Files.createTempDirectory("dbtasks-patroni-");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        PatroniCluster cluster = new PatroniCluster(StandbyPair.binaries().orElseThrow(), dir);
        try {
            cluster.startEtcd();
            for (int i = 0; i < members; i++) {
                Member m =
                        new Member("pg" + i, ChaosFixtures.freePort(), ChaosFixtures.freePort(), dir.resolve("pg" + i));
                Files.createDirectories(m.dir());
                cluster.members.add(m);
            }
            if (ChaosFixtures.root()) {
                ChaosFixtures.run(List.of("chown", "-R", "postgres:postgres", dir.toString()));
            }
            // the first member bootstraps alone, so that it is the one that runs initdb
            for (Member m : cluster.members) {
                cluster.writeConfig(m, synchronous);
                cluster.startPatroni(m);
                if (m == cluster.members.get(0)) {
                    cluster.await(
                            "a leader",
                            Duration.ofSeconds(90),
                            () -> cluster.leader().isPresent());
                }
            }
            cluster.awaitHealthy(synchronous, Duration.ofSeconds(120));
            try (Connection c = DriverManager.getConnection(
                            cluster.url(cluster.leader().orElseThrow(), "postgres"));
                    Statement s = c.createStatement()) {
                s.executeUpdate("CREATE DATABASE " + database);
            }
            return cluster;
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
    }

    private void startEtcd() throws Exception {
        List<Integer> peerPorts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            etcdClientPorts.add(ChaosFixtures.freePort());
            peerPorts.add(ChaosFixtures.freePort());
        }
        String initial = IntStream.range(0, 3)
                .mapToObj(i -> "e" + i + "=http://127.0.0.1:" + peerPorts.get(i))
                .collect(Collectors.joining(","));
        for (int i = 0; i < 3; i++) {
            Path data = dir.resolve("etcd" + i);
            List<String> command = List.of(
                    ETCD.toString(),
                    "--name",
                    "e" + i,
                    "--data-dir",
                    data.toString(),
                    "--listen-client-urls",
                    "http://127.0.0.1:" + etcdClientPorts.get(i),
                    "--advertise-client-urls",
                    "http://127.0.0.1:" + etcdClientPorts.get(i),
                    "--listen-peer-urls",
                    "http://127.0.0.1:" + peerPorts.get(i),
                    "--initial-advertise-peer-urls",
                    "http://127.0.0.1:" + peerPorts.get(i),
                    "--initial-cluster",
                    initial,
                    "--initial-cluster-state",
                    "new",
                    "--initial-cluster-token",
                    scope);
            processes.add(new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("etcd" + i + ".log").toFile())
                    .start());
        }
        await(
                "etcd",
                Duration.ofSeconds(60),
                () -> IntStream.range(0, 3)
                        .allMatch(i -> get("http://127.0.0.1:" + etcdClientPorts.get(i) + "/health") == 200));
    }

    private void writeConfig(Member m, boolean synchronous) throws Exception {
        String hosts = etcdClientPorts.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
        String yaml = String.join(
                "\n",
                "scope: " + scope,
                "name: " + m.name(),
                "log:",
                "  level: INFO",
                "restapi:",
                "  listen: 127.0.0.1:" + m.restPort(),
                "  connect_address: 127.0.0.1:" + m.restPort(),
                "etcd3:",
                "  hosts: " + hosts,
                "bootstrap:",
                "  dcs:",
                "    ttl: 8",
                "    loop_wait: 1",
                "    retry_timeout: 3",
                "    primary_start_timeout: 0",
                "    maximum_lag_on_failover: 1073741824",
                "    synchronous_mode: " + synchronous,
                "    postgresql:",
                "      use_pg_rewind: true",
                "      use_slots: true",
                "      remove_data_directory_on_rewind_failure: true",
                "      remove_data_directory_on_diverged_timelines: true",
                "      parameters:",
                "        max_connections: 200",
                "        wal_level: replica",
                "        hot_standby: 'on'",
                "        wal_log_hints: 'on'",
                "        max_wal_senders: 10",
                "        max_replication_slots: 10",
                "        wal_keep_size: 256MB",
                "        shared_buffers: 32MB",
                "  initdb:",
                "    - encoding: UTF8",
                "    - locale: C",
                "    - no-sync",
                "postgresql:",
                "  listen: 127.0.0.1:" + m.port(),
                "  connect_address: 127.0.0.1:" + m.port(),
                "  data_dir: " + m.data(),
                "  bin_dir: " + bin,
                "  pgpass: " + m.dir().resolve("pgpass"),
                "  authentication:",
                "    superuser:",
                "      username: postgres",
                "    replication:",
                "      username: postgres",
                "    rewind:",
                "      username: postgres",
                "  parameters:",
                "    unix_socket_directories: '" + m.dir() + "'",
                "  pg_hba:",
                "    - local all all trust",
                "    - host all all 127.0.0.1/32 trust",
                "    - host replication all 127.0.0.1/32 trust",
                "");
        Files.writeString(m.config(), yaml);
        if (ChaosFixtures.root()) {
            ChaosFixtures.run(List.of("chown", "postgres:postgres", m.config().toString()));
        }
    }

    private void startPatroni(Member m) throws IOException {
        List<String> command = new ArrayList<>();
        if (ChaosFixtures.root()) {
            // setpriv execs: the process started is Patroni itself (runuser would stay its parent)
            command.addAll(List.of("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"));
        }
        command.addAll(List.of(PATRONI.toString(), m.config().toString()));
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        dir.resolve(m.name() + "-patroni.log").toFile()));
        pb.environment().put("HOME", m.dir().toString());
        processes.add(pb.start());
    }

    /** @return the members, in the order of the multi-host URL */
    List<Member> members() {
        return List.copyOf(members);
    }

    /**
     * @param database a database
     * @return the multi-host URL over every member: {@code targetServerType=primary}, {@code
     *     hostRecheckSeconds=1} (pgjdbc trusts a host's remembered role that long), {@code
     *     connectTimeout=2}, {@code socketTimeout=10} (a connection to a stopped host fails after 10 s
     *     instead of hanging)
     */
    String multiHostUrl(String database) {
        return "jdbc:postgresql://"
                + members.stream().map(m -> "127.0.0.1:" + m.port()).collect(Collectors.joining(","))
                + "/" + database
                + "?user=postgres&targetServerType=primary&hostRecheckSeconds=1&connectTimeout=2"
                + "&socketTimeout=10&loginTimeout=5";
    }

    /**
     * @param m a member
     * @param database a database
     * @return the member's own URL
     */
    String url(Member m, String database) {
        return "jdbc:postgresql://127.0.0.1:" + m.port() + "/" + database
                + "?user=postgres&connectTimeout=2&socketTimeout=10&loginTimeout=5";
    }

    /** @return the member that holds the leader lock and runs as primary, per its REST API */
    Optional<Member> leader() {
        return members.stream()
                .filter(m -> get("http://127.0.0.1:" + m.restPort() + "/primary") == 200)
                .findFirst();
    }

    /**
     * @param m a member
     * @return whether it runs as a replica, per its REST API ({@code GET /replica})
     */
    boolean replica(Member m) {
        return get("http://127.0.0.1:" + m.restPort() + "/replica") == 200;
    }

    /**
     * @param m a member
     * @return whether its PostgreSQL answers and is in recovery (a standby: fenced from writes)
     */
    boolean inRecovery(Member m) {
        try (Connection c = DriverManager.getConnection(url(m, "postgres"));
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_is_in_recovery()")) {
            rs.next();
            return rs.getBoolean(1);
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * Waits until a member leads and every other member streams from it, synchronously (one {@code
     * sync} standby) when {@code synchronous}, caught up.
     *
     * @param synchronous whether a synchronous standby is required
     * @param timeout how long to wait
     * @throws Exception if not healthy in time
     */
    void awaitHealthy(boolean synchronous, Duration timeout) throws Exception {
        try {
            healthy(synchronous, timeout);
        } catch (IllegalStateException e) {
            throw new IllegalStateException(e.getMessage() + "; processes: " + processList(), e);
        }
    }

    /** @return the cluster's processes: pid, parent, state, kernel wait channel, command line */
    String processList() {
        StringBuilder b = new StringBuilder();
        for (ProcessHandle p : ownProcesses()) {
            String stat = "";
            try {
                String s = Files.readString(Path.of("/proc", String.valueOf(p.pid()), "stat"));
                String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
                stat = f[0] + " " + Files.readString(Path.of("/proc", String.valueOf(p.pid()), "wchan"));
            } catch (IOException | RuntimeException gone) {
                // exited meanwhile
            }
            b.append("\n  ")
                    .append(p.pid())
                    .append(' ')
                    .append(p.parent().map(ProcessHandle::pid).orElse(0L))
                    .append(' ')
                    .append(stat)
                    .append(' ')
                    .append(commandLine(p.pid()));
        }
        return b.toString();
    }

    private void healthy(boolean synchronous, Duration timeout) throws Exception {
        await("a healthy cluster (synchronous: " + synchronous + ")", timeout, () -> {
            Optional<Member> leader = leader();
            if (leader.isEmpty()) {
                return false;
            }
            try (Connection c = DriverManager.getConnection(url(leader.get(), "postgres"));
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT COUNT(*) FILTER (WHERE state = 'streaming'"
                            + " AND replay_lsn = pg_current_wal_lsn()), COUNT(*) FILTER (WHERE sync_state = 'sync')"
                            + " FROM pg_stat_replication")) {
                rs.next();
                if (rs.getLong(1) != members.size() - 1 || (synchronous && rs.getLong(2) < 1)) {
                    return false;
                }
            } catch (SQLException e) {
                return false;
            }
            // Patroni's own view too: every other member a running replica, and in synchronous mode
            // one of them its synchronous standby (a switchover goes only there)
            List<Member> others =
                    members.stream().filter(m -> !m.equals(leader.get())).toList();
            return others.stream().allMatch(this::replica)
                    && (!synchronous
                            || others.stream().anyMatch(m -> get("http://127.0.0.1:" + m.restPort() + "/sync") == 200));
        });
    }

    /**
     * Sets Patroni's {@code synchronous_mode} with {@code patronictl edit-config} and waits until
     * the cluster is healthy in that mode.
     *
     * @param synchronous the mode
     * @throws Exception if patronictl fails or the cluster does not settle in 60 s
     */
    void synchronousMode(boolean synchronous) throws Exception {
        patronictl("edit-config", "--force", "--set", "synchronous_mode=" + synchronous);
        if (!synchronous) {
            await("no synchronous standby", Duration.ofSeconds(60), () -> {
                try (Connection c = DriverManager.getConnection(url(leader().orElseThrow(), "postgres"));
                        Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SHOW synchronous_standby_names")) {
                    rs.next();
                    return rs.getString(1).isEmpty();
                } catch (Exception e) {
                    return false;
                }
            });
        }
        awaitHealthy(synchronous, Duration.ofSeconds(60));
    }

    /**
     * {@code patronictl switchover} from the current leader to {@code candidate}.
     *
     * @param leader the current leader
     * @param candidate the member to lead
     * @throws Exception if patronictl fails
     */
    void switchover(Member leader, Member candidate) throws Exception {
        patronictl("switchover", "--force", "--leader", leader.name(), "--candidate", candidate.name());
    }

    /**
     * @param m a member
     * @return its postmaster's process id
     * @throws IOException if it is not running
     */
    long postmaster(Member m) throws IOException {
        return Long.parseLong(
                Files.readAllLines(m.data().resolve("postmaster.pid")).get(0).trim());
    }

    /**
     * The member's processes as a stopped host has them: its Patroni and its PostgreSQL (postmaster
     * and every child).
     *
     * @param m a member
     * @return their process ids, parents first
     * @throws IOException if its postmaster is not running
     */
    List<Long> hostProcesses(Member m) throws IOException {
        List<Long> pids = new ArrayList<>();
        String config = m.config().toString();
        ProcessHandle.allProcesses()
                .filter(p -> commandLine(p.pid()).contains(config))
                .forEach(p -> pids.add(p.pid()));
        long pm = postmaster(m);
        pids.add(pm);
        ProcessHandle.of(pm).ifPresent(p -> p.descendants().forEach(d -> pids.add(d.pid())));
        return pids;
    }

    /**
     * @param m the leader
     * @return the process ids of its WAL senders (one a replica)
     * @throws SQLException if it cannot be asked
     */
    List<Long> walSenders(Member m) throws SQLException {
        List<Long> pids = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(url(m, "postgres"));
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pid FROM pg_stat_replication")) {
            while (rs.next()) {
                pids.add(rs.getLong(1));
            }
        }
        return pids;
    }

    /**
     * Sends a signal to processes.
     *
     * @param signal e.g. {@code KILL}, {@code STOP}, {@code CONT}
     * @param pids process ids
     * @throws Exception if kill cannot run
     */
    static void signal(String signal, List<Long> pids) throws Exception {
        if (pids.isEmpty()) {
            return;
        }
        List<String> c = new ArrayList<>(List.of("kill", "-" + signal));
        pids.forEach(p -> c.add(String.valueOf(p)));
        new ProcessBuilder(c).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
    }

    /**
     * @return the processes of this cluster still alive (for the no-stray-process check), found by
     *     their command lines in {@code /proc} (PostgreSQL's children rewrite theirs to a title that
     *     carries the scope as {@code cluster_name})
     */
    List<ProcessHandle> ownProcesses() {
        String d = dir.toString();
        return ProcessHandle.allProcesses()
                .filter(p -> {
                    String c = commandLine(p.pid());
                    return c.contains(d) || c.contains(scope);
                })
                .toList();
    }

    private static String commandLine(long pid) {
        try {
            return Files.readString(Path.of("/proc", String.valueOf(pid), "cmdline"))
                    .replace('\0', ' ');
        } catch (IOException | RuntimeException gone) {
            return "";
        }
    }

    private void patronictl(String... args) throws Exception {
        List<String> c = new ArrayList<>(
                List.of(PATRONICTL.toString(), "-c", members.get(0).config().toString()));
        c.addAll(List.of(args));
        ChaosFixtures.run(c);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        killAll();
        keepLogs();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs or ran
        }
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }

    /** Copies the logs of etcd, Patroni and PostgreSQL to {@code target/chaos/patroni-cluster}. */
    private void keepLogs() {
        Path to = Path.of("target", "chaos", "patroni-cluster");
        try (Stream<Path> all = Files.walk(dir)) {
            Files.createDirectories(to);
            for (Path p : all.filter(
                            f -> f.toString().endsWith(".log") || f.toString().endsWith(".yml"))
                    .toList()) {
                Files.copy(
                        p,
                        to.resolve(dir.relativize(p).toString().replace('/', '-')),
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            // best effort
        }
    }

    /** SIGKILL of everything of the cluster, SIGCONT first so that stopped processes die too. */
    private void killAll() {
        for (int round = 0; round < 50; round++) {
            List<ProcessHandle> left = new ArrayList<>(ownProcesses());
            processes.stream().filter(Process::isAlive).forEach(p -> left.add(p.toHandle()));
            if (left.isEmpty()) {
                return;
            }
            List<Long> pids = left.stream().map(ProcessHandle::pid).distinct().toList();
            try {
                signal("KILL", pids);
                signal("CONT", pids);
                Thread.sleep(100);
            } catch (Exception e) {
                left.forEach(ProcessHandle::destroyForcibly);
            }
        }
    }

    private int get(String url) {
        try {
            return http.send(
                            HttpRequest.newBuilder(URI.create(url))
                                    .timeout(Duration.ofSeconds(2))
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    static void await(String what, Duration timeout, BooleanSupplier condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no " + what + " within " + timeout.toSeconds() + " s");
            }
            Thread.sleep(200);
        }
    }
}
