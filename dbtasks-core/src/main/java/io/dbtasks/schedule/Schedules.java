package io.dbtasks.schedule;

import io.dbtasks.DbTasksException;
import io.dbtasks.InvalidPayloadException;
import io.dbtasks.Page;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The stored recurring schedules of one database ({@code dbtasks_schedule}): create, update, pause,
 * resume and delete them at run time, and read their next and last slots and latest outcome. Get it
 * from {@code DbTasks.schedules()}; usable before {@code start()} and on an engine without workers.
 *
 * <p>Every change is one transaction on the schedule's row and takes effect on every engine at its
 * next poll (at most the schedule poll interval later), with no restart: engines read schedules from
 * their rows at every poll and cache nothing. Changing a trigger recomputes the next slot from now,
 * so the new trigger applies from its first slot after the change; a slot already enqueued stays.
 *
 * <p>Implementations are thread-safe.
 */
public interface Schedules {
    /**
     * Stores a new schedule. Its first slot is its trigger's first at or after its {@link
     * Schedule#startAt()} (default: now, by the database clock).
     *
     * @param schedule the schedule
     * @return the stored schedule
     * @throws ScheduleExistsException if a schedule of that name exists
     * @throws InvalidPayloadException if the payload cannot be written as JSON
     * @throws DbTasksException if the database fails
     */
    ScheduleInfo create(Schedule schedule);

    /**
     * Replaces the definition of an existing schedule, keeping its last slot, latest task and paused
     * state. If the trigger or start changed, the next slot is recomputed from now.
     *
     * @param schedule the new definition, found by its name
     * @return the stored schedule
     * @throws ScheduleNotFoundException if there is no schedule of that name
     * @throws InvalidPayloadException if the payload cannot be written as JSON
     * @throws DbTasksException if the database fails
     */
    ScheduleInfo update(Schedule schedule);

    /**
     * Creates the schedule, or updates it (as {@link #update}) if its name exists with another
     * definition; leaves it untouched if it exists with the same one, so its next slot, and with it the
     * slots missed while no engine ran, survive a restart. This is what a schedule declared in code
     * gets at {@code start()}.
     *
     * @param schedule the schedule
     * @return the stored schedule
     * @throws InvalidPayloadException if the payload cannot be written as JSON
     * @throws DbTasksException if the database fails
     */
    ScheduleInfo save(Schedule schedule);

    /**
     * Pauses a schedule: no slot is enqueued until it is resumed. Tasks already enqueued run. Pausing
     * a paused schedule changes nothing.
     *
     * @param name the schedule
     * @return the stored schedule, with no next slot
     * @throws ScheduleNotFoundException if there is no schedule of that name
     * @throws DbTasksException if the database fails
     */
    ScheduleInfo pause(String name);

    /**
     * Resumes a paused schedule from its trigger's first slot after now; the slots that fell in the
     * pause are not missed slots and get no task. Resuming a running schedule changes nothing.
     *
     * @param name the schedule
     * @return the stored schedule, with its next slot
     * @throws ScheduleNotFoundException if there is no schedule of that name
     * @throws DbTasksException if the database fails
     */
    ScheduleInfo resume(String name);

    /**
     * Deletes a schedule: no slot is enqueued any more; tasks already enqueued stay and run. A schedule
     * declared in code comes back at the next {@code start()} of an engine that declares it.
     *
     * @param name the schedule
     * @return {@code true} if it existed
     * @throws DbTasksException if the database fails
     */
    boolean delete(String name);

    /**
     * @param name a schedule name; may be {@code null}
     * @return the schedule, or empty if there is none of that name
     * @throws DbTasksException if the database fails
     */
    Optional<ScheduleInfo> find(@Nullable String name);

    /**
     * Lists schedules by name.
     *
     * @param page the zero-based page
     * @param size rows per page, 1 to 1000
     * @return the page with the total count
     * @throws IllegalArgumentException if {@code page} is negative or {@code size} out of range
     * @throws DbTasksException if the database fails
     */
    Page<ScheduleInfo> list(int page, int size);

    /**
     * Polls once, on the calling thread, as a started engine does every schedule poll interval:
     * enqueues the task of every due slot of every schedule (subject to each one's {@link MissedSlots}
     * policy) and advances the schedules, in batches, until none is due. Safe to call while engines
     * poll; each slot still becomes one task. For tests (with {@code DbTasks.Builder.scheduleClock}) and
     * for applications that drive polls themselves ({@code DbTasks.Builder.scheduling(false)}).
     *
     * @return the number of tasks enqueued
     * @throws DbTasksException if the database fails
     */
    int enqueueDue();
}
