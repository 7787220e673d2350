package io.dbtasks.server.api;

import io.dbtasks.AttemptOutcome;
import io.dbtasks.TaskStats;
import io.dbtasks.TaskStatus;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Task counts by status and attempt counts by outcome, overall and per queue. Every status and
 * outcome is present, in declaration order, with 0 where there are none.
 *
 * @param tasks task counts by status
 * @param attempts attempt counts by outcome
 * @param queues the same per queue, by queue name in alphabetical order
 */
public record StatsResponse(Map<String, Long> tasks, Map<String, Long> attempts, Map<String, QueueStats> queues) {

    /**
     * @param tasks task counts by status
     * @param attempts attempt counts by outcome
     */
    public record QueueStats(Map<String, Long> tasks, Map<String, Long> attempts) {}

    static StatsResponse of(TaskStats stats) {
        Map<String, QueueStats> queues = new TreeMap<>();
        stats.queues()
                .forEach((queue, q) -> queues.put(queue, new QueueStats(byStatus(q.tasks()), byOutcome(q.attempts()))));
        return new StatsResponse(byStatus(stats.tasks()), byOutcome(stats.attempts()), queues);
    }

    private static Map<String, Long> byStatus(Map<TaskStatus, Long> counts) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (TaskStatus s : TaskStatus.values()) {
            out.put(s.name(), counts.getOrDefault(s, 0L));
        }
        return out;
    }

    private static Map<String, Long> byOutcome(Map<AttemptOutcome, Long> counts) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (AttemptOutcome o : AttemptOutcome.values()) {
            out.put(o.name(), counts.getOrDefault(o, 0L));
        }
        return out;
    }
}
