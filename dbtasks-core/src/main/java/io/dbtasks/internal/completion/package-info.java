/**
 * Settling attempts: the guarded RUNNING-exit writes ({@link io.dbtasks.internal.completion.TaskUpdate}),
 * success and failure writers, the attempt history, the batcher that groups outcomes, and what a
 * workflow step's end does to the steps waiting for it ({@code Dependents}), in the same transaction.
 * Depends on {@code support} and the dialects. Not an API: anything here may change in any release. Use {@link
 * io.dbtasks.DbTasks}.
 */
package io.dbtasks.internal.completion;
