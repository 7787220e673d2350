package io.dbtasks.internal;

import io.dbtasks.TaskStatus;
import io.dbtasks.internal.schedule.ScheduleConfig;
import io.dbtasks.internal.support.EngineConfig;
import io.dbtasks.once.RunOnceTarget;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Everything one engine is built from, validated once by {@code DbTasks.Builder} and immutable:
 * {@link Engine#create} wires every part from it, and nothing is set on an engine afterwards.
 *
 * @param config the worker settings (queues, lease, intervals, defaults)
 * @param schedules the declared schedules and how slots are polled
 * @param migrate whether to apply the schema migrations when the engine reaches its database
 * @param transactionPooling whether the connections go through a transaction pooler; null to detect
 * @param retentionInterval how often to sweep finished rows; zero for never
 * @param taskRetention age of finished tasks by status; a zero age keeps that status
 * @param queueRetention ages of finished tasks by queue and status that override {@code
 *     taskRetention} for that queue; a zero age keeps that queue's tasks in that status
 * @param guardRetention age of finished run-once guard rows; zero keeps them
 * @param inboxRetention age of inbox records; zero keeps them
 * @param longRunningByKind long-running thresholds by kind; win over the queue's and the engine's
 * @param longRunningByQueue long-running thresholds by queue; win over the engine's
 * @param unclaimableGrace how long due tasks no live engine can run wait before they are failed;
 *     zero never fails them
 * @param runOnceTargets the run-once targets whose keys this engine runs again when their runner
 *     died; empty for none
 * @param jobTargets the job invoker's allow-listed targets; empty where it cannot list them (it
 *     then calls any target)
 */
public record EngineSettings(
        EngineConfig config,
        ScheduleConfig schedules,
        boolean migrate,
        Boolean transactionPooling,
        Duration retentionInterval,
        Map<TaskStatus, Duration> taskRetention,
        Map<String, Map<TaskStatus, Duration>> queueRetention,
        Duration guardRetention,
        Duration inboxRetention,
        Map<String, Duration> longRunningByKind,
        Map<String, Duration> longRunningByQueue,
        Duration unclaimableGrace,
        Map<String, RunOnceTarget> runOnceTargets,
        Supplier<Optional<? extends Collection<String>>> jobTargets) {

    /** Copies the maps, so the settings cannot change after they were validated. */
    public EngineSettings {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(schedules, "schedules");
        Objects.requireNonNull(retentionInterval, "retentionInterval");
        taskRetention = Map.copyOf(taskRetention);
        Map<String, Map<TaskStatus, Duration>> byQueue = new java.util.LinkedHashMap<>();
        queueRetention.forEach((queue, ages) -> byQueue.put(queue, Map.copyOf(ages)));
        queueRetention = java.util.Collections.unmodifiableMap(byQueue);
        Objects.requireNonNull(guardRetention, "guardRetention");
        Objects.requireNonNull(inboxRetention, "inboxRetention");
        longRunningByKind = Map.copyOf(longRunningByKind);
        longRunningByQueue = Map.copyOf(longRunningByQueue);
        Objects.requireNonNull(unclaimableGrace, "unclaimableGrace");
        runOnceTargets = Map.copyOf(runOnceTargets);
        Objects.requireNonNull(jobTargets, "jobTargets");
    }
}
