package io.dbtasks.server.jobs;

import java.util.List;

/**
 * The body of {@code POST /api/job-runs}: exactly one of the three selections.
 *
 * @param businessType run every enabled definition of this business type (or, with {@code failed},
 *     limit the re-run to it)
 * @param codes run the enabled definitions with these codes, at most 10,000
 * @param failed {@code true} to re-run every enabled definition whose last run FAILED
 * @param rerunSucceeded with {@code businessType} or {@code codes}: {@code true} to run definitions
 *     whose last run SUCCEEDED as well; absent or {@code false} runs only those not yet succeeded
 */
public record JobRunsRequest(String businessType, List<String> codes, Boolean failed, Boolean rerunSucceeded) {}
