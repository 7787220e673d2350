/**
 * Concurrency and rate limits per concurrency key: at most N tasks of a key RUNNING at once across
 * the cluster, optionally one at a time in enqueue order (FIFO), and at most R starts of a key in any
 * window of length P ({@link io.dbtasks.limit.Rate}) ({@link io.dbtasks.limit.Limits}, from
 * {@code DbTasks.limits()}). Limits are rows in the database, changed at run time, and enforced by
 * the claim itself.
 */
@NullMarked
package io.dbtasks.limit;

import org.jspecify.annotations.NullMarked;
