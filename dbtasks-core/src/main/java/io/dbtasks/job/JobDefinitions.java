package io.dbtasks.job;

import io.dbtasks.DbTasksException;
import java.util.Collection;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Job definitions in the engine's database ({@code dbtasks_job}) and their runs.
 *
 * <p>Running a definition enqueues a task of kind {@value #KIND} whose payload carries the code,
 * business type, business id, target and arguments as they are at that moment (its name is the code
 * and its reference the business id); the run is also recorded in {@code dbtasks_job_run} (task id,
 * code, run number, business type and id), where runs can be queried. A run locks its definition's
 * row: while the previous run's task is PENDING or RUNNING, running again enqueues nothing and
 * returns that task ({@link JobRun#duplicate()}), so concurrent runs from several instances give one
 * task. That row lock is the run's idempotency guard; the tasks carry no idempotency key, so a page
 * of runs is inserted with multi-row statements rather than one round trip per keyed task. Bulk runs go through keyset pages of {@value #PAGE_SIZE} definitions, one transaction each,
 * so no more than one page is ever in memory.
 *
 * <p>An enabled definition with a cron gets a recurring schedule ({@code io.dbtasks.schedule}) named
 * {@value #SCHEDULE_PREFIX}{@code <id>}, kept in step by create, update and delete: each slot fires
 * once across the cluster (the schedule's slot key) and its task of kind {@value #CRON_KIND} runs the
 * definition, again skipping it while its previous run is still PENDING or RUNNING. Missed slots
 * after downtime run once (the schedule's default, "run the latest once").
 *
 * <p>Runs by code, by list of codes and by business type run only the definitions that have not yet
 * succeeded: a definition whose last run's task is SUCCEEDED is skipped ({@link
 * JobRun#alreadySucceeded()}, {@link JobRunSummary#alreadySucceeded()}), so running a business type
 * twice gives each definition one successful run. Pass {@code rerunSucceeded = true} to run those
 * again. A definition whose last task was deleted (by retention) counts as not yet run. Runs of a
 * definition's cron schedule run it at every slot, succeeded or not.
 *
 * <p>The task calls the target through the engine's {@link JobTargetInvoker}, and only engines that
 * can call it claim it: an engine without an invoker does not claim job runs, and one whose invoker
 * lists its targets ({@link JobTargetInvoker#allowListedTargets()}) claims only runs of those, so
 * the runs of a target another application allow-lists wait for that application's engines. A run
 * that no live engine of its queue can call is failed with the reason after the engines' {@code
 * unclaimableGrace}. A target that is not allow-listed on the engine that took the run (an invoker
 * that lists no targets), or arguments that do not bind, fail that task at once (FAILED, not
 * retried) and every other task keeps running.
 *
 * <p>Thread-safe.
 */
public interface JobDefinitions {
    /** The task kind of job runs. */
    String KIND = "dbtasks.job";
    /**
     * The task kind a job definition's cron schedule enqueues at each slot; its task runs the
     * definition (as {@link #run(String)}) in its own transaction, so each slot gives one run.
     */
    String CRON_KIND = "dbtasks.job.cron";
    /** The prefix of the schedule names of job definitions with a cron, followed by the definition id. */
    String SCHEDULE_PREFIX = "dbtasks.job:";
    /** Definitions per page (and per transaction) of a bulk run. */
    int PAGE_SIZE = 500;

    /**
     * @param definition the new definition
     * @return it as stored
     * @throws DuplicateJobException if its code exists already
     * @throws DbTasksException if the database fails
     */
    StoredJob create(JobDefinition definition);

    /**
     * Replaces the definition with the same code; its runs and last task are kept. Runs already
     * enqueued keep the target and arguments they were enqueued with.
     *
     * @param definition the new content
     * @return it as stored
     * @throws JobNotFoundException if no definition has its code
     * @throws DbTasksException if the database fails
     */
    StoredJob update(JobDefinition definition);

    /**
     * Deletes a definition; its runs' tasks are left as they are.
     *
     * @param code the code
     * @return {@code true} if it existed
     * @throws DbTasksException if the database fails
     */
    boolean delete(String code);

    /**
     * @param code the code
     * @return the definition with its last run, or empty
     * @throws DbTasksException if the database fails
     */
    Optional<StoredJob> find(String code);

    /**
     * Lists definitions in id order, a keyset page at a time.
     *
     * @param businessType only this business type, or {@code null} for all
     * @param afterId the {@link JobPage#nextAfterId()} of the previous page, or {@code null} for the first
     * @param limit definitions per page, 1 to 1000
     * @return the page
     * @throws IllegalArgumentException if {@code limit} is out of range
     * @throws DbTasksException if the database fails
     */
    JobPage list(@Nullable String businessType, @Nullable Long afterId, int limit);

    /**
     * Lists the runs recorded under a code, newest (highest run number) first, a keyset page at a
     * time: each run's number, task, enqueue, start and finish times, outcome, duration, retries and
     * last error. Runs stay listed after their definition is deleted; their task fields are {@code
     * null} once retention has removed the task.
     *
     * @param code the definition's code
     * @param beforeRunNo the {@link JobRunRecordPage#nextBeforeRunNo()} of the previous page, or
     *     {@code null} for the newest page
     * @param limit runs per page, 1 to 1000
     * @return the page; empty if no run has this code
     * @throws IllegalArgumentException if {@code limit} is out of range
     * @throws DbTasksException if the database fails
     */
    JobRunRecordPage runs(String code, @Nullable Long beforeRunNo, int limit);

    /**
     * Runs one definition now, unless its last run is still pending or has succeeded; the same as
     * {@link #run(String, boolean) run(code, false)}.
     *
     * @param code the code
     * @return the run, or the pending one marked {@link JobRun#duplicate()}, or the succeeded one
     *     marked {@link JobRun#alreadySucceeded()}
     * @throws JobNotFoundException if no definition has the code
     * @throws JobDisabledException if it is disabled
     * @throws DbTasksException if the database fails
     */
    default JobRun run(String code) {
        return run(code, false);
    }

    /**
     * Runs one definition now, unless its last run is still PENDING or RUNNING.
     *
     * @param code the code
     * @param rerunSucceeded {@code true} to run it even if its last run SUCCEEDED; {@code false} to
     *     leave it, returning that run marked {@link JobRun#alreadySucceeded()}
     * @return the run, or the pending one marked {@link JobRun#duplicate()}, or the succeeded one
     * @throws JobNotFoundException if no definition has the code
     * @throws JobDisabledException if it is disabled
     * @throws DbTasksException if the database fails
     */
    JobRun run(String code, boolean rerunSucceeded);

    /**
     * Runs every enabled definition of a business type that has not yet succeeded; the same as
     * {@link #runBusinessType(String, boolean) runBusinessType(businessType, false)}.
     *
     * @param businessType the business type
     * @return what was done
     * @throws DbTasksException if the database fails
     */
    default JobRunSummary runBusinessType(String businessType) {
        return runBusinessType(businessType, false);
    }

    /**
     * Runs every enabled definition of a business type, a page at a time; a page's runs commit
     * together, and a failure stops at that page with the earlier pages' runs kept (running again is
     * safe: pending runs are not duplicated, succeeded ones not run again unless asked).
     *
     * @param businessType the business type
     * @param rerunSucceeded {@code true} to run definitions whose last run SUCCEEDED as well; {@code
     *     false} to skip them (counted in {@link JobRunSummary#alreadySucceeded()})
     * @return what was done
     * @throws DbTasksException if the database fails
     */
    JobRunSummary runBusinessType(String businessType, boolean rerunSucceeded);

    /**
     * Runs the enabled definitions with these codes that have not yet succeeded; the same as {@link
     * #runCodes(Collection, boolean) runCodes(codes, false)}.
     *
     * @param codes the codes, at most 10,000; duplicates count once
     * @return what was done, with the codes no definition has
     * @throws IllegalArgumentException if there are more than 10,000 codes
     * @throws DbTasksException if the database fails
     */
    default JobRunSummary runCodes(Collection<String> codes) {
        return runCodes(codes, false);
    }

    /**
     * Runs the enabled definitions with these codes, a page at a time.
     *
     * @param codes the codes, at most 10,000; duplicates count once
     * @param rerunSucceeded {@code true} to run definitions whose last run SUCCEEDED as well; {@code
     *     false} to skip them (counted in {@link JobRunSummary#alreadySucceeded()})
     * @return what was done, with the codes no definition has
     * @throws IllegalArgumentException if there are more than 10,000 codes
     * @throws DbTasksException if the database fails
     */
    JobRunSummary runCodes(Collection<String> codes, boolean rerunSucceeded);

    /**
     * Runs again every enabled definition whose last run's task is FAILED, a page at a time, with
     * the definition's current target and arguments.
     *
     * @param businessType only this business type, or {@code null} for all
     * @return what was done
     * @throws DbTasksException if the database fails
     */
    JobRunSummary rerunFailed(@Nullable String businessType);
}
