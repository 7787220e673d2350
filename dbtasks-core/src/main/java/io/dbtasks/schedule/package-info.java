/**
 * Recurring schedules: cron (with seconds, in Spring or Quartz syntax, in a time zone), fixed rate
 * and fixed delay, each slot of which becomes exactly one task across the whole cluster.
 *
 * <p><b>Declaring.</b> A {@link io.dbtasks.schedule.Schedule} names a {@link
 * io.dbtasks.schedule.Trigger}, the task kind (and payload, queue) each slot enqueues, and a {@link
 * io.dbtasks.schedule.MissedSlots} policy. Declare schedules in code with {@code
 * DbTasks.Builder.schedule(...)} (each one's row is inserted, or updated if its definition changed,
 * when the engine starts), or create, update, pause, resume and delete them at run time through
 * {@code DbTasks.schedules()} ({@link io.dbtasks.schedule.Schedules}).
 *
 * <p><b>Exactly one task per slot, without a leader.</b> Every schedule is a row of {@code
 * dbtasks_schedule} holding its next slot. Every started engine polls for rows whose next slot is
 * due by the database clock, locking them with {@code FOR UPDATE SKIP LOCKED} in batches, so engines
 * share the rows and never wait on each other. For each row it enqueues the slot's task and advances
 * the row with a guarded (compare-and-set on the row's version) UPDATE in the same transaction: the
 * task exists if and only if the row moved past its slot. The task's idempotency key is the slot key
 * ({@link io.dbtasks.schedule.Schedule#slotKey}), unique in {@code dbtasks_task}, so even a row
 * restored from a backup or a bug that advanced it twice cannot make a second task for one slot.
 * Nothing about a schedule is held only in memory: an engine that stops, or is killed, loses nothing,
 * and every change to a row (a new cron, a pause) is seen by every engine at its next poll. No leader
 * is elected: a second engine inserting the same slot can only collide with the unique key.
 *
 * <p><b>Time.</b> Due-ness is decided by the database clock. Slots of a cron are computed in the
 * schedule's time zone; see {@link io.dbtasks.schedule.Trigger} for daylight-saving time. Tests may
 * replace the database clock with a {@link java.time.Clock} ({@code
 * DbTasks.Builder.scheduleClock}) and drive polls with {@link
 * io.dbtasks.schedule.Schedules#enqueueDue()}.
 */
@NullMarked
package io.dbtasks.schedule;

import org.jspecify.annotations.NullMarked;
