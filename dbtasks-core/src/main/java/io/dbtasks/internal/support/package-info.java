/**
 * The engine's shared plumbing: connections and transactions ({@link io.dbtasks.internal.support.Jdbc}),
 * the database clock, health tracking, the engine configuration, capabilities and event publishing.
 * It depends on no engine package but the dialects. Not an API: anything here may change in any release. Use
 * {@link io.dbtasks.DbTasks}.
 */
package io.dbtasks.internal.support;
