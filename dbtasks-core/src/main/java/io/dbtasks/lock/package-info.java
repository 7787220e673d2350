/**
 * Lease locks: named locks with a lease and a fencing token per grant, strictly increasing per name,
 * decided by the database clock ({@link io.dbtasks.lock.LeaseLocks}, from {@code DbTasks.locks()}).
 */
@NullMarked
package io.dbtasks.lock;

import org.jspecify.annotations.NullMarked;
