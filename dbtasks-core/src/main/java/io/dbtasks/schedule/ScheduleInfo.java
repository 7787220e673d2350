package io.dbtasks.schedule;

import io.dbtasks.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A stored schedule, as its {@code dbtasks_schedule} row and its latest task show it now.
 *
 * @param name the unique name
 * @param trigger when the slots are
 * @param kind the kind of task each slot enqueues
 * @param queue the queue of each slot's task
 * @param payloadJson the payload of each slot's task as JSON text, or {@code null} for none
 * @param priority the priority of each slot's task
 * @param maxAttempts the attempts each slot's task gets, or {@code null} for the engine's default
 * @param missedSlots what is done with missed slots
 * @param misfireThreshold how late a slot may be found due and still count as on time
 * @param paused whether the schedule is paused (no slot is enqueued while paused)
 * @param nextSlot the next slot to enqueue; {@code null} while paused, while a fixed delay waits for
 *     its previous task to finish, or when a cron fires no more
 * @param lastSlot the latest slot enqueued, or {@code null} if none yet
 * @param lastTaskKey the idempotency key of the latest slot's task ({@link Schedule#slotKey}), or
 *     {@code null} if none yet
 * @param lastTaskId the id of the latest slot's task, or {@code null} if none yet or it was deleted
 *     (by retention or an operator)
 * @param lastTaskStatus the status of the latest slot's task, read from the task row at query time
 *     (PENDING, RUNNING, or its outcome SUCCEEDED, FAILED, CANCELLED), or {@code null} as for {@code
 *     lastTaskId}
 * @param declaredInCode whether the schedule was declared with {@code DbTasks.Builder.schedule}
 *     (its row is brought back in line with the code at every start) rather than created at run time
 * @param createdAt when the row was created (database time)
 * @param updatedAt when the row last changed (database time), by the API or by a slot
 * @param version incremented by every change of the row; the guard of every UPDATE
 */
public record ScheduleInfo(
        String name,
        Trigger trigger,
        String kind,
        String queue,
        @Nullable String payloadJson,
        int priority,
        @Nullable Integer maxAttempts,
        MissedSlots missedSlots,
        Duration misfireThreshold,
        boolean paused,
        @Nullable Instant nextSlot,
        @Nullable Instant lastSlot,
        @Nullable String lastTaskKey,
        @Nullable Long lastTaskId,
        @Nullable TaskStatus lastTaskStatus,
        boolean declaredInCode,
        Instant createdAt,
        Instant updatedAt,
        long version) {}
