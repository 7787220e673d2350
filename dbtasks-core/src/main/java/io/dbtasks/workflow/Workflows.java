package io.dbtasks.workflow;

import java.sql.Connection;
import java.util.Optional;

/**
 * Workflows in the engine's database ({@code dbtasks_workflow}, the steps' tasks and the {@code
 * dbtasks_dependency} edges).
 *
 * <p>Inserting a workflow writes its row, one task per step and one edge per dependency, in one
 * transaction: all of it or nothing. A step without dependencies is PENDING at once; a step with
 * dependencies is WAITING, with a count of the dependencies it still waits for, and is not
 * claimable: WAITING tasks are outside the claim index, so any number of them costs the claim
 * nothing. The transaction that settles a step (the handler's success, its last failed attempt, its
 * cancellation, the rescue of its lease) also counts down its dependents and makes PENDING those
 * that wait for nothing more, or cancels them (see {@link Dependency.OnFailure}), so a dependent is
 * released exactly when its last dependency's end commits, with no poller. Retrying a failed step
 * ({@link io.dbtasks.DbTasks#retry(long)}) sends back to WAITING the steps its failure cancelled.
 *
 * <p>Thread-safe.
 */
public interface Workflows {
    /**
     * Inserts a workflow in its own transaction and wakes local workers of the queues of its
     * steps without dependencies.
     *
     * @param workflow the workflow
     * @return the stored workflow: its id and each step's task id and state
     * @throws io.dbtasks.InvalidPayloadException if a payload cannot be written as JSON; nothing is
     *     stored
     * @throws io.dbtasks.DbTasksException if the database fails; nothing is stored
     */
    WorkflowRun insert(Workflow workflow);

    /**
     * Inserts a workflow on the caller's connection, so it commits or rolls back with the caller's
     * transaction: a rollback leaves no step, edge or workflow row. The connection is neither
     * committed nor closed.
     *
     * @param connection an open connection to the engine's database, in a transaction
     * @param workflow the workflow
     * @return the stored workflow, as it will be once the transaction commits
     * @throws io.dbtasks.InvalidPayloadException if a payload cannot be written as JSON
     * @throws io.dbtasks.DbTasksException if the database fails
     */
    WorkflowRun insert(Connection connection, Workflow workflow);

    /**
     * Reads a workflow with its steps' states, dependencies and results.
     *
     * @param id a workflow id
     * @return the workflow, or empty if there is none with that id
     * @throws io.dbtasks.DbTasksException if the database fails
     */
    Optional<WorkflowRun> find(long id);

    /**
     * Cancels what has not started of a workflow: its WAITING and PENDING steps become CANCELLED.
     * Running steps finish (or use {@link io.dbtasks.DbTasks#cancel(long)} on their tasks); their
     * dependents are cancelled already, so nothing after them runs.
     *
     * @param id a workflow id
     * @return how many steps were cancelled
     * @throws WorkflowNotFoundException if there is no such workflow
     * @throws io.dbtasks.DbTasksException if the database fails
     */
    int cancel(long id);

    /**
     * Retries the FAILED steps of a workflow, one more attempt each, and sends back to WAITING the
     * steps their failures cancelled, so the workflow goes on.
     *
     * @param id a workflow id
     * @return how many steps were retried
     * @throws WorkflowNotFoundException if there is no such workflow
     * @throws io.dbtasks.DbTasksException if the database fails
     */
    int retry(long id);
}
