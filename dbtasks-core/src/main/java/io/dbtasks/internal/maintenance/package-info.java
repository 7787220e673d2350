/**
 * Maintenance in the background: deleting finished tasks and other old rows in batches after their
 * retention, and vacuuming the PostgreSQL task table. Depends on {@code support} and the dialects. Not an API: anything
 * here may change in any release. Use {@link io.dbtasks.DbTasks}.
 */
package io.dbtasks.internal.maintenance;
