package io.dbtasks;

import java.util.Map;

/**
 * Counts of tasks by status and of attempts by outcome. Every status and outcome is present, with
 * 0 where there are none.
 *
 * @param tasks task counts by status
 * @param attempts attempt counts by outcome
 * @param queues the same counts per queue, by queue name
 */
public record TaskStats(
        Map<TaskStatus, Long> tasks, Map<AttemptOutcome, Long> attempts, Map<String, QueueStats> queues) {

    /**
     * The counts of one queue.
     *
     * @param tasks task counts by status
     * @param attempts attempt counts by outcome
     */
    public record QueueStats(Map<TaskStatus, Long> tasks, Map<AttemptOutcome, Long> attempts) {}
}
