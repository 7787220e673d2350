/**
 * For implementers of {@link io.dbtasks.lock.LeaseLocks} on another store (the Redis variant in
 * {@code dbtasks-redis} is one): the waiting line and holding logic every store shares ({@link
 * io.dbtasks.lock.spi.AbstractLeaseLocks}), the lease heartbeat ({@link io.dbtasks.lock.spi.Renewal}),
 * owner and worker names ({@link io.dbtasks.lock.spi.Owners}, {@link
 * io.dbtasks.lock.spi.WorkerIds}) and how work failures are passed on ({@link
 * io.dbtasks.lock.spi.WorkFailures}). A supported extension point: modules outside the core use this package, never {@code io.dbtasks.internal}.
 */
@NullMarked
package io.dbtasks.lock.spi;

import org.jspecify.annotations.NullMarked;
