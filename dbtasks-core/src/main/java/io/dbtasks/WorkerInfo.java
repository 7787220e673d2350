package io.dbtasks;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * One engine with workers, as it last recorded itself in the database ({@link DbTasks#workers()}).
 *
 * <p>An engine writes its row when it starts, touches it every heartbeat interval and deletes it
 * when it stops cleanly; a row whose {@code heartbeatAt} is older than a few heartbeat intervals
 * belongs to an engine that crashed or lost its database.
 *
 * @param workerId the engine's worker id (the lease owner of the tasks it claims)
 * @param queues queue name to concurrency on that engine
 * @param startedAt when it started, database time
 * @param heartbeatAt its last heartbeat, database time
 */
public record WorkerInfo(String workerId, Map<String, Integer> queues, Instant startedAt, Instant heartbeatAt) {
    /** Copies {@code queues}. */
    public WorkerInfo {
        Objects.requireNonNull(workerId, "workerId");
        queues = Map.copyOf(queues);
    }
}
