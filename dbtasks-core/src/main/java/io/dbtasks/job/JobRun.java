package io.dbtasks.job;

/**
 * What running one definition did.
 *
 * @param code the definition's code
 * @param taskId the task of the run: the new one, or the run still PENDING or RUNNING
 * @param runNo the run's number for this definition, from 1
 * @param duplicate {@code true} if the previous run was still PENDING or RUNNING, so nothing new was
 *     enqueued and {@code taskId} is that run's task
 * @param alreadySucceeded {@code true} if the previous run had SUCCEEDED and succeeded runs were not
 *     asked to run again, so nothing new was enqueued and {@code taskId} is that run's task
 */
public record JobRun(String code, long taskId, long runNo, boolean duplicate, boolean alreadySucceeded) {
    /** @return whether this call enqueued a new run */
    public boolean enqueued() {
        return !duplicate && !alreadySucceeded;
    }
}
