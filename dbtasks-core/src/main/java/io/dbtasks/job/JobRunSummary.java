package io.dbtasks.job;

import java.util.List;

/**
 * What a bulk run did, counted over every page it went through.
 *
 * @param enqueued runs enqueued
 * @param alreadyQueued definitions skipped because their previous run was still PENDING or RUNNING
 * @param alreadySucceeded definitions skipped because their last run SUCCEEDED (only when succeeded
 *     runs were not asked to run again)
 * @param disabled definitions skipped because they are disabled
 * @param notFound codes asked for that no definition has (only for runs of listed codes), in the
 *     order asked
 * @param pages how many pages (transactions) the run took
 */
public record JobRunSummary(
        int enqueued, int alreadyQueued, int alreadySucceeded, int disabled, List<String> notFound, int pages) {
    /** Copies {@code notFound}. */
    public JobRunSummary {
        notFound = List.copyOf(notFound);
    }
}
