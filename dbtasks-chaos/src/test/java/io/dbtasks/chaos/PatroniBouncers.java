package io.dbtasks.chaos;

import io.dbtasks.chaos.PatroniCluster.Member;
import io.dbtasks.testing.PgBouncer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

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
 * on_role_change} callback: every 200 ms it asks each member's REST API for its role and restarts
 * the member's bouncer, on the same port, when the member has come up in another role than its
 * bouncer started with. {@link #close()} stops the thread and the bouncers. One test drives it.
 */
final class PatroniBouncers implements AutoCloseable {
    private final PatroniCluster cluster;
    private final String poolMode;
    private final int poolSize;
    private final List<PgBouncer> bouncers = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();
    private final List<String> roles = new ArrayList<>();
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
                roles.add(role(m));
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

    private String role(Member m) {
        if (cluster.leader().filter(m::equals).isPresent()) {
            return "primary";
        }
        return cluster.replica(m) ? "replica" : "down";
    }

    private void follow() {
        List<Member> members = cluster.members();
        while (!closed) {
            for (int i = 0; i < members.size() && !closed; i++) {
                String now = role(members.get(i));
                if (!now.equals("down") && !now.equals(roles.get(i))) {
                    synchronized (this) {
                        if (closed) {
                            return;
                        }
                        bouncers.get(i).close();
                        try {
                            bouncers.set(i, start(members.get(i), ports.get(i)));
                            roles.set(i, now);
                            restarts.incrementAndGet();
                            System.out.println("chaos[pgbouncer] restarted the bouncer of "
                                    + members.get(i).name() + ", now " + now);
                        } catch (IOException e) {
                            System.out.println("chaos[pgbouncer] restarting the bouncer of "
                                    + members.get(i).name() + " failed, again next round: " + e.getMessage());
                        }
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
