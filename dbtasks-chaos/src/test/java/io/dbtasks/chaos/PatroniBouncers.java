package io.dbtasks.chaos;

import io.dbtasks.chaos.PatroniCluster.Member;
import io.dbtasks.testing.PgBouncer;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.postgresql.core.BaseConnection;

/**
 * One PgBouncer per member of a {@link PatroniCluster}, each in front of its member only, and the
 * multi-host URL over them with {@code targetServerType=primary}: the driver picks the bouncer whose
 * member is the primary.
 *
 * <p>PgBouncer (1.18 here) hands every new client the startup parameters it cached from its first
 * server connection, {@code in_hot_standby} among them, and pgjdbc takes a server's role from that
 * parameter: after a failover the new leader's bouncer still says "standby" and the old leader's
 * "primary" (the driver then finds no primary, or writes to a replica and gets "read-only
 * transaction" errors), until the bouncer restarts. So a thread plays Patroni's {@code
 * on_role_change} callback: every 200 ms it compares, for each member that answers, {@code
 * pg_is_in_recovery()} on the member with the {@code in_hot_standby} its bouncer reports, and
 * restarts the bouncer, on the same port, when they differ (a restart as soon as Patroni reports
 * the new role can come before the promotion has finished, and cache the old role again). {@link #close()} stops the thread and the bouncers. One test drives it.
 */
final class PatroniBouncers implements AutoCloseable {
    private final PatroniCluster cluster;
    private final String poolMode;
    private final int poolSize;
    private final List<PgBouncer> bouncers = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();
    private final AtomicLong restarts = new AtomicLong();
    private final Thread follower;
    private volatile boolean closed;

    /**
     * Starts the bouncers and the thread that restarts them on a role change.
     *
     * @param cluster the cluster, healthy
     * @param poolMode PgBouncer's {@code pool_mode}
     * @param poolSize server connections per bouncer ({@code default_pool_size})
     * @throws IOException if a bouncer does not start
     */
    PatroniBouncers(PatroniCluster cluster, String poolMode, int poolSize) throws IOException {
        this.cluster = cluster;
        this.poolMode = poolMode;
        this.poolSize = poolSize;
        try {
            for (Member m : cluster.members()) {
                int port = ChaosFixtures.freePort();
                bouncers.add(start(m, port));
                ports.add(port);
            }
        } catch (IOException | RuntimeException e) {
            bouncers.forEach(PgBouncer::close);
            throw e;
        }
        follower = new Thread(this::follow, "pgbouncer-follower");
        follower.setDaemon(true);
        follower.start();
    }

    /**
     * @param database the database
     * @return the multi-host URL over the bouncers, {@code targetServerType=primary}, with the
     *     timeouts of {@link PatroniCluster#multiHostUrl}, and {@code prepareThreshold=0} in
     *     transaction mode
     */
    String url(String database) {
        return "jdbc:postgresql://"
                + ports.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","))
                + "/" + database
                + "?user=postgres&targetServerType=primary&hostRecheckSeconds=1&connectTimeout=2"
                + "&socketTimeout=10&loginTimeout=5"
                + (poolMode.equals("transaction") ? "&prepareThreshold=0" : "");
    }

    /** @return bouncers restarted so far on a role change */
    long restarts() {
        return restarts.get();
    }

    private PgBouncer start(Member m, int port) throws IOException {
        return PgBouncer.start(cluster.url(m, "chaos"), poolMode, poolSize, "127.0.0.1", port, List.of());
    }

    /**
     * @return whether the member is in recovery, asked on its own URL; empty if it does not answer
     */
    private Optional<Boolean> inRecovery(Member m) {
        try (Connection c = DriverManager.getConnection(cluster.url(m, "chaos"));
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_is_in_recovery()")) {
            rs.next();
            return Optional.of(rs.getBoolean(1));
        } catch (SQLException e) {
            return Optional.empty();
        }
    }

    /**
     * @return whether a new client of the bouncer on {@code port} is told {@code in_hot_standby=on},
     *     the parameter pgjdbc takes the role from; empty if it does not answer
     */
    private static Optional<Boolean> reportedStandby(int port) {
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port
                + "/chaos?user=postgres&connectTimeout=2&socketTimeout=5&loginTimeout=5&prepareThreshold=0")) {
            String v = c.unwrap(BaseConnection.class).getParameterStatus("in_hot_standby");
            return v == null ? Optional.empty() : Optional.of(v.equals("on"));
        } catch (SQLException e) {
            return Optional.empty();
        }
    }

    private void follow() {
        List<Member> members = cluster.members();
        while (!closed) {
            for (int i = 0; i < members.size() && !closed; i++) {
                Optional<Boolean> actual = inRecovery(members.get(i));
                if (actual.isEmpty()) {
                    continue; // down or starting: its bouncer cannot be asked either
                }
                Optional<Boolean> reported = reportedStandby(ports.get(i));
                if (reported.isEmpty() || reported.equals(actual)) {
                    continue;
                }
                synchronized (this) {
                    if (closed) {
                        return;
                    }
                    bouncers.get(i).close();
                    try {
                        bouncers.set(i, start(members.get(i), ports.get(i)));
                        restarts.incrementAndGet();
                        System.out.println("chaos[pgbouncer] restarted the bouncer of "
                                + members.get(i).name()
                                + ": it said in_hot_standby=" + (reported.get() ? "on" : "off") + ", the member is "
                                + (actual.get() ? "in recovery" : "the primary"));
                    } catch (IOException e) {
                        System.out.println("chaos[pgbouncer] restarting the bouncer of "
                                + members.get(i).name() + " failed, again next round: " + e.getMessage());
                    }
                }
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        follower.interrupt();
        follower.join(10_000);
        synchronized (this) {
            bouncers.forEach(PgBouncer::close);
        }
    }
}
