package io.dbtasks.server.instance;

import io.dbtasks.DbTasks;
import io.dbtasks.WorkerInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.springframework.stereotype.Component;

/**
 * Which engines are alive and which queues their workers serve, read from the core's worker rows
 * ({@link DbTasks#workers()}, table {@code dbtasks_worker}: each engine with workers writes its row
 * at start, touches it every heartbeat interval and deletes it at a clean stop). An engine counts as
 * live while its last heartbeat is younger than {@link #LIVE_FOR}. Lets the API warn about a task
 * enqueued on a queue no live engine serves. Thread-safe.
 */
@Component
public class LiveInstances {
    /** How long after its last heartbeat an engine still counts as live. */
    public static final Duration LIVE_FOR = Duration.ofSeconds(35);

    private static final long CACHE_MILLIS = 2_000;

    private final DbTasks dbTasks;
    private volatile Set<String> served = Set.of();
    private volatile long servedAt;

    /** @param dbTasks the engine, whose database holds every engine's worker row */
    public LiveInstances(DbTasks dbTasks) {
        this.dbTasks = dbTasks;
    }

    /**
     * @param queue a queue name
     * @return whether a live engine (this one included, once started) serves it; read from the
     *     database at most every 2 seconds
     * @throws io.dbtasks.DbTasksException if the database fails
     */
    public boolean isServed(String queue) {
        long now = System.currentTimeMillis();
        if (now - servedAt > CACHE_MILLIS) {
            Set<String> s = new HashSet<>();
            for (WorkerInfo w : live()) {
                s.addAll(w.queues().keySet());
            }
            served = s;
            servedAt = now;
        }
        return served.contains(queue);
    }

    /**
     * @return the engines whose last heartbeat is younger than {@link #LIVE_FOR}, compared with this
     *     machine's clock
     * @throws io.dbtasks.DbTasksException if the database fails
     */
    public List<WorkerInfo> live() {
        Instant since = Instant.now().minus(LIVE_FOR);
        return dbTasks.workers().stream()
                .filter(w -> w.heartbeatAt().isAfter(since))
                .toList();
    }
}
