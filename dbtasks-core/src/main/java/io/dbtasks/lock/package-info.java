/**
 * Lease locks: named locks with a lease and a fencing token per grant, strictly increasing per name,
 * decided by the database clock ({@link io.dbtasks.lock.LeaseLocks}, from {@code DbTasks.locks()}).
 */
package io.dbtasks.lock;
