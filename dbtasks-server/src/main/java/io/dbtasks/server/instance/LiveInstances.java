package io.dbtasks.server.instance;

import io.dbtasks.DbTasks;
import io.dbtasks.server.store.ServerSchema;
import io.dbtasks.spring.DbTasksProperties;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Which server instances are alive and which queues their workers serve, kept in
 * {@code dbtasks_server_instance}: each instance writes a heartbeat row every {@link #HEARTBEAT}
 * with the queues it works (none when its workers are disabled), and counts as live while its last
 * heartbeat is younger than {@link #LIVE_FOR}. Lets the API warn about a task enqueued on a queue no
 * live instance serves, and the dashboard list instances. Rows of instances gone for a day are
 * deleted. Thread-safe.
 */
@Component
public class LiveInstances implements DisposableBean {
    /** How often an instance writes its heartbeat. */
    public static final Duration HEARTBEAT = Duration.ofSeconds(10);
    /** How long after its last heartbeat an instance still counts as live. */
    public static final Duration LIVE_FOR = Duration.ofSeconds(35);

    private static final Logger log = LoggerFactory.getLogger(LiveInstances.class);
    private static final long CACHE_MILLIS = 2_000;

    private final JdbcTemplate jdbc;
    private final String instanceId;
    private final String queues;
    private final Set<String> ownQueues;
    private final long startedAt = System.currentTimeMillis();
    private final ScheduledExecutorService timer;
    private volatile Set<String> served = Set.of();
    private volatile long servedAt;

    /**
     * One instance: a live instance serving its queues, as {@code queue:concurrency}.
     *
     * @param id the instance (its worker id)
     * @param queues the queues its workers serve, empty if none
     * @param startedAt when it started, epoch milliseconds
     * @param heartbeatAt its last heartbeat, epoch milliseconds
     */
    public record Instance(String id, List<String> queues, long startedAt, long heartbeatAt) {}

    /**
     * @param jdbc the server's database
     * @param schema the server's tables, migrated before this writes
     * @param dbTasks the engine, for its worker id
     * @param properties the configured queues and whether workers run
     */
    public LiveInstances(JdbcTemplate jdbc, ServerSchema schema, DbTasks dbTasks, DbTasksProperties properties) {
        this.jdbc = jdbc;
        this.instanceId = dbTasks.workerId();
        this.ownQueues = properties.isEnabled() && properties.getWorkers().isEnabled()
                ? new TreeSet<>(properties.getQueues().keySet())
                : Set.of();
        this.queues = String.join(",", ownQueues);
        beat();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dbtasks-server-heartbeat");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(
                this::beatQuietly, HEARTBEAT.toMillis(), HEARTBEAT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * @param queue a queue name
     * @return whether a live instance (this one included) serves it; read from the database at most
     *     every 2 seconds
     */
    public boolean isServed(String queue) {
        if (ownQueues.contains(queue)) {
            return true;
        }
        long now = System.currentTimeMillis();
        if (now - servedAt > CACHE_MILLIS) {
            Set<String> s = new HashSet<>();
            for (Instance i : live()) {
                s.addAll(i.queues());
            }
            served = s;
            servedAt = now;
        }
        return served.contains(queue);
    }

    /** @return the live instances, newest heartbeat first */
    public List<Instance> live() {
        long since = System.currentTimeMillis() - LIVE_FOR.toMillis();
        return jdbc.query(
                "SELECT instance_id, queues, started_at, heartbeat_at FROM dbtasks_server_instance"
                        + " WHERE heartbeat_at > ? ORDER BY heartbeat_at DESC",
                (rs, n) -> new Instance(
                        rs.getString(1),
                        rs.getString(2) == null || rs.getString(2).isEmpty()
                                ? List.of()
                                : Arrays.asList(rs.getString(2).split(",")),
                        rs.getLong(3),
                        rs.getLong(4)),
                since);
    }

    private void beatQuietly() {
        try {
            beat();
        } catch (RuntimeException e) {
            log.warn("Instance heartbeat failed: {}", e.getMessage());
        }
    }

    private void beat() {
        long now = System.currentTimeMillis();
        int n = jdbc.update(
                "UPDATE dbtasks_server_instance SET queues = ?, heartbeat_at = ? WHERE instance_id = ?",
                queues,
                now,
                instanceId);
        if (n == 0) {
            try {
                jdbc.update(
                        "INSERT INTO dbtasks_server_instance (instance_id, queues, started_at, heartbeat_at)"
                                + " VALUES (?, ?, ?, ?)",
                        instanceId,
                        queues,
                        startedAt,
                        now);
            } catch (org.springframework.dao.DuplicateKeyException e) {
                // inserted at the same moment by a restart with the same worker id: the next beat updates it
            }
        }
        jdbc.update(
                "DELETE FROM dbtasks_server_instance WHERE heartbeat_at < ?",
                now - Duration.ofDays(1).toMillis());
    }

    @Override
    public void destroy() {
        timer.shutdownNow();
        try {
            jdbc.update("DELETE FROM dbtasks_server_instance WHERE instance_id = ?", instanceId);
        } catch (RuntimeException e) {
            log.debug("Could not remove instance row at shutdown: {}", e.getMessage());
        }
    }
}
