package io.dbtasks;

/**
 * The tables of the toolkit that {@link DbTasks#recentRows} shows read-only, and the columns each
 * row carries (time columns as {@link java.time.Instant}).
 */
public enum ToolTable {
    /** Lease locks, newest acquired first: name, token, owner, acquired_at, expires_at. */
    LOCKS,
    /**
     * Run-once guards, newest change first: once_key, status, token, owner, runs, started_at,
     * finished_at, duration_ms, last_error, lease_expires_at.
     */
    GUARDS,
    /** Processed inbox messages, newest first: consumer, message_id, received_at. */
    INBOX,
    /** Batches, newest first: id, kind, name, chunks, created_at. */
    BATCHES
}
