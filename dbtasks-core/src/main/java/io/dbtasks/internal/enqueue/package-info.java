/**
 * Enqueueing: inserting tasks with their defaults resolved, duplicates by idempotency key, and the
 * throttled wake-up that tells other instances' claim loops. Depends on {@code execution} (the handler registry), {@code query} and {@code
 * support}. Not an API: anything here may change in any release. Use {@link io.dbtasks.DbTasks}.
 */
package io.dbtasks.internal.enqueue;
