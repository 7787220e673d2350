package io.dbtasks.internal.job;

/**
 * The payload of a {@code dbtasks.job.cron} task: which definition a schedule slot runs.
 *
 * @param code the definition's code
 */
public record JobCronPayload(String code) {}
