package io.dbtasks;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * One engine with workers, as it last recorded itself in the database ({@link DbTasks#workers()}).
 *
 * <p>An engine writes its row when it starts, touches it every heartbeat interval and deletes it
 * when it stops cleanly; a row whose {@code heartbeatAt} is older than a few heartbeat intervals
 * belongs to an engine that crashed or lost its database. The row also says what the engine can
 * run: it claims only tasks of its {@code kinds} and, for job runs, of its {@code jobTargets}.
 *
 * @param workerId the engine's worker id (the lease owner of the tasks it claims)
 * @param queues queue name to concurrency on that engine
 * @param startedAt when it started, database time
 * @param heartbeatAt its last heartbeat, database time
 * @param kinds the task kinds it has a handler for, or {@code null} when it does not say (an engine
 *     of a version before kinds were recorded, which claims every kind)
 * @param jobTargets the job targets ({@code bean.method(types)}) it allow-lists, or {@code null}
 *     when it runs no job definitions or calls any target (its invoker cannot list them)
 */
public record WorkerInfo(
        String workerId,
        Map<String, Integer> queues,
        Instant startedAt,
        Instant heartbeatAt,
        @Nullable Set<String> kinds,
        @Nullable Set<String> jobTargets) {
    /** Copies {@code queues}, {@code kinds} and {@code jobTargets}. */
    public WorkerInfo {
        Objects.requireNonNull(workerId, "workerId");
        queues = Map.copyOf(queues);
        kinds = kinds == null ? null : Set.copyOf(kinds);
        jobTargets = jobTargets == null ? null : Set.copyOf(jobTargets);
    }

    /**
     * A row that does not say what the engine can run.
     *
     * @param workerId the engine's worker id
     * @param queues queue name to concurrency
     * @param startedAt when it started
     * @param heartbeatAt its last heartbeat
     */
    public WorkerInfo(String workerId, Map<String, Integer> queues, Instant startedAt, Instant heartbeatAt) {
        this(workerId, queues, startedAt, heartbeatAt, null, null);
    }
}
