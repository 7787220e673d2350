package io.dbtasks;

import java.time.Duration;

/**
 * How deep one queue is right now, for gauges and dashboards; see {@link DbTasks#queueDepths()}.
 * Immutable.
 *
 * @param queue the queue name
 * @param pending PENDING tasks, due or not
 * @param running RUNNING tasks
 * @param failed FAILED tasks (dead: out of attempts or not retryable) still kept
 * @param dueNow PENDING tasks whose run-at has passed, by the database clock
 * @param oldestDueAge how long the longest-waiting due task has been due (database now minus its
 *     run-at); {@link Duration#ZERO} when none is due
 * @param waiting WAITING tasks: workflow steps and batch callbacks whose dependencies have not all
 *     ended yet; not claimable, and not counted in {@code pending}
 */
public record QueueDepth(
        String queue, long pending, long running, long failed, long dueNow, Duration oldestDueAge, long waiting) {
    /**
     * A depth without WAITING tasks, as measured before workflows existed.
     *
     * @param queue the queue name
     * @param pending PENDING tasks
     * @param running RUNNING tasks
     * @param failed FAILED tasks
     * @param dueNow PENDING tasks due now
     * @param oldestDueAge the oldest due task's wait
     */
    public QueueDepth(String queue, long pending, long running, long failed, long dueNow, Duration oldestDueAge) {
        this(queue, pending, running, failed, dueNow, oldestDueAge, 0);
    }
}
