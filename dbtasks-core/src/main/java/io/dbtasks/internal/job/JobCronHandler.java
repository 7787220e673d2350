package io.dbtasks.internal.job;

import io.dbtasks.TaskContext;
import io.dbtasks.TransactionalTaskHandler;
import java.sql.Connection;
import java.util.function.Supplier;

/**
 * Runs a job definition for a schedule slot, in the slot task's transaction: the run's task and
 * records commit together with the slot task's completion, so a slot task retried after a lost
 * lease does not run the definition twice.
 */
public final class JobCronHandler implements TransactionalTaskHandler<JobCronPayload> {
    private final Supplier<JdbcJobDefinitions> jobs;

    /** @param jobs the definitions, available once the engine is built */
    public JobCronHandler(Supplier<JdbcJobDefinitions> jobs) {
        this.jobs = jobs;
    }

    @Override
    public void handle(TaskContext context, Connection transaction, JobCronPayload payload) throws Exception {
        jobs.get().runForSlot(transaction, payload.code());
    }
}
