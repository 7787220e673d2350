package io.dbtasks;

/**
 * Attempts finished in one minute, by outcome group ({@link DbTasks#attemptsPerMinute}).
 *
 * @param minute the epoch minute of {@code finishedAt} (seconds since the epoch divided by 60)
 * @param succeeded attempts that SUCCEEDED
 * @param failed attempts that FAILED, TIMED_OUT or LEASE_EXPIRED
 */
public record AttemptsPerMinute(long minute, long succeeded, long failed) {}
