package io.dbtasks.internal.job;

import io.dbtasks.TaskContext;
import io.dbtasks.TransactionalTaskHandler;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Runs a job definition for a schedule slot, in the slot task's transaction: the run's task and
 * records commit together with the slot task's completion, so a slot task retried after a lost
 * lease does not run the definition twice.
 */
public final class JobCronHandler implements TransactionalTaskHandler<JobCronPayload> {
    /** Runs a job definition for a schedule slot, in a transaction given by the caller. */
    @FunctionalInterface
    public interface SlotRunner {
        /**
         * @param transaction the slot task's transaction; not committed here
         * @param code the definition's code
         * @throws SQLException if the database fails
         */
        void runForSlot(Connection transaction, String code) throws SQLException;
    }

    private final SlotRunner jobs;

    /** @param jobs runs the definitions; the engine's job definitions */
    public JobCronHandler(SlotRunner jobs) {
        this.jobs = java.util.Objects.requireNonNull(jobs, "jobs");
    }

    @Override
    public void handle(TaskContext context, Connection transaction, JobCronPayload payload) throws Exception {
        jobs.runForSlot(transaction, payload.code());
    }
}
