/**
 * Leases: claiming with a fencing token, heartbeats, cancel requests, the rescue of expired leases, and
 * the watch over tasks no live engine can run. Depends on {@code query}, {@code completion} and
 * {@code support}. Not an API: anything here may change in any release. Use {@link
 * io.dbtasks.DbTasks}.
 */
package io.dbtasks.internal.lease;
