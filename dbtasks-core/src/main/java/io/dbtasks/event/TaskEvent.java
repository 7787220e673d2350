package io.dbtasks.event;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Something that happened to one task. Immutable.
 *
 * @param type what happened
 * @param taskId the task's id
 * @param kind the task's kind
 * @param queue the task's queue
 * @param attempt the attempt the event concerns (1 for the first claim); 0 for {@link
 *     Type#ENQUEUED}
 * @param fencingToken the fencing token of that attempt's claim; {@code null} for {@link
 *     Type#ENQUEUED}
 * @param workerId the engine that published the event (for {@link Type#RESCUED}, the rescuer; the
 *     expired holder is named in {@code detail}); never {@code null}
 * @param at when the engine observed the transition, by the publishing engine's clock (the
 *     database's clock decides due-ness and expiry; this one is for display and latency)
 * @param nextRunAt for {@link Type#RETRY_SCHEDULED}, when the retry is due, estimated on the
 *     engine's clock as {@code at} plus the backoff (the row's {@code run_at} is the database's now
 *     plus the same backoff); {@code null} otherwise
 * @param detail a readable reason for failures, retries, rescues, lease losses and cancels (the
 *     error's class and message, for instance); {@code null} otherwise
 * @param runAt when the attempt was due (the task's run-at by the database clock), so a listener
 *     can measure start lag as {@code at - runAt} of {@link Type#STARTED}; {@code null} for events
 *     built without the task row ({@link Type#RESCUED}, {@link Type#LEASE_LOST})
 * @param traceParent the W3C {@code traceparent} stored with the task, or {@code null}
 */
public record TaskEvent(
        Type type,
        long taskId,
        String kind,
        String queue,
        int attempt,
        @Nullable Long fencingToken,
        String workerId,
        Instant at,
        @Nullable Instant nextRunAt,
        @Nullable String detail,
        @Nullable Instant runAt,
        @Nullable String traceParent) {

    /**
     * An event without run-at and trace parent.
     *
     * @param type see the record
     * @param taskId see the record
     * @param kind see the record
     * @param queue see the record
     * @param attempt see the record
     * @param fencingToken see the record
     * @param workerId see the record
     * @param at see the record
     * @param nextRunAt see the record
     * @param detail see the record
     */
    public TaskEvent(
            Type type,
            long taskId,
            String kind,
            String queue,
            int attempt,
            @Nullable Long fencingToken,
            String workerId,
            Instant at,
            @Nullable Instant nextRunAt,
            @Nullable String detail) {
        this(type, taskId, kind, queue, attempt, fencingToken, workerId, at, nextRunAt, detail, null, null);
    }

    /** Checks the fields that are never {@code null}. */
    public TaskEvent {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(workerId, "workerId");
        Objects.requireNonNull(at, "at");
    }

    /** What happened to the task. */
    public enum Type {
        /** A new task was written (not a duplicate of an idempotency key). */
        ENQUEUED,
        /** This engine claimed the task: it is RUNNING under a new fencing token. */
        CLAIMED,
        /** Its handler started (a claimed task may wait for a free slot first). */
        STARTED,
        /** The attempt succeeded and SUCCEEDED was written. */
        SUCCEEDED,
        /** The attempt failed and FAILED was written: out of attempts, or not retryable. */
        FAILED,
        /** The attempt failed or timed out and the task is PENDING again, due at {@code nextRunAt}. */
        RETRY_SCHEDULED,
        /**
         * The task's lease had expired by the database clock and this engine's rescue sent it back
         * to PENDING (or to FAILED or CANCELLED when it had no attempts left or was to be cancelled).
         */
        RESCUED,
        /**
         * The holder found its lease gone (expired and rescued, or changed by an operator): its
         * handler is interrupted and whatever it does afterwards is discarded.
         */
        LEASE_LOST,
        /** The task ended CANCELLED at an operator's request. */
        CANCELLED,
        /** The engine gave the task back to PENDING unstarted or on shutdown, without using up the attempt. */
        HANDED_BACK,
        /**
         * Its handler has run longer than the engine's long-running threshold; published once per
         * attempt.
         */
        LONG_RUNNING
    }
}
