/**
 * Job definitions: rows that name a target method, its parameter types and JSON
 * arguments, run by code, by business type, in batches of codes, or again after a failure. Each run
 * is a task of kind {@link io.dbtasks.job.JobDefinitions#KIND}; the method is called through a
 * {@link io.dbtasks.job.JobTargetInvoker}, which resolves only what the application allow-listed.
 */
@NullMarked
package io.dbtasks.job;

import org.jspecify.annotations.NullMarked;
