/**
 * Workflows: a graph of steps, each a task, where a step runs only once the steps it depends on have
 * succeeded. A workflow is inserted whole in one transaction (the caller's, when given one), a step
 * that waits is WAITING and out of the claim's path, and the transaction that settles a step's last
 * dependency makes it claimable. A dependency that fails for good or is cancelled cancels its
 * dependents, or lets them run anyway, per {@link io.dbtasks.workflow.Dependency}; a step's result
 * is read by its dependents through {@link io.dbtasks.TaskContext#dependencyResults()}.
 */
@NullMarked
package io.dbtasks.workflow;

import org.jspecify.annotations.NullMarked;
