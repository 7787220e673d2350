/**
 * The claim loop: one {@link io.dbtasks.internal.claim.QueueWorker} per queue claims up to its free
 * slots and starts an execution for each task. Depends on {@code execution}, {@code query} and {@code
 * support}. Not an API: anything here may change in any release. Use {@link io.dbtasks.DbTasks}.
 */
package io.dbtasks.internal.claim;
