/**
 * Running claimed tasks: one {@link io.dbtasks.internal.execution.Execution} per attempt, the handler
 * registry, the set of running executions, the keeper that renews their leases, and the completer that
 * hands their outcomes to the {@code completion} writers. Depends on {@code lease}, {@code query},
 * {@code completion} and {@code support}. Not an API: anything here may change in any release. Use
 * {@link io.dbtasks.DbTasks}.
 */
package io.dbtasks.internal.execution;
