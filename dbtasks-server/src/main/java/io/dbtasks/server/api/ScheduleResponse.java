package io.dbtasks.server.api;

import io.dbtasks.TaskStatus;
import io.dbtasks.schedule.ScheduleInfo;
import io.dbtasks.schedule.Trigger;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;

/**
 * A schedule as the API shows it (without its payload).
 *
 * @param name the unique name
 * @param trigger {@code CRON}, {@code FIXED_RATE} or {@code FIXED_DELAY}
 * @param cron the cron expression, or {@code null} for the other triggers
 * @param timeZone the cron's time zone, or {@code null} for the other triggers
 * @param period the rate or delay (ISO-8601), or {@code null} for a cron
 * @param kind the task kind each slot enqueues
 * @param queue its queue
 * @param paused whether slots are skipped
 * @param nextSlot the next slot, or {@code null} (paused, waiting for a fixed delay, or no more)
 * @param lastSlot the latest slot enqueued, or {@code null}
 * @param lastTaskId the latest slot's task, or {@code null}
 * @param lastTaskStatus that task's status, or {@code null}
 */
public record ScheduleResponse(
        String name,
        Trigger.Type trigger,
        String cron,
        String timeZone,
        Duration period,
        String kind,
        String queue,
        boolean paused,
        Instant nextSlot,
        Instant lastSlot,
        Long lastTaskId,
        TaskStatus lastTaskStatus) {
    static ScheduleResponse of(ScheduleInfo s) {
        Trigger t = s.trigger();
        return new ScheduleResponse(
                s.name(),
                t.type(),
                t.expression().orElse(null),
                t.zone().map(ZoneId::getId).orElse(null),
                t.period().orElse(null),
                s.kind(),
                s.queue(),
                s.paused(),
                s.nextSlot(),
                s.lastSlot(),
                s.lastTaskId(),
                s.lastTaskStatus());
    }
}
