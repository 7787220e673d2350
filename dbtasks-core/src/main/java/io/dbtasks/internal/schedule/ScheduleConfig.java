package io.dbtasks.internal.schedule;

import io.dbtasks.schedule.Schedule;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * The validated schedule settings of one engine; built by {@code DbTasks.Builder}.
 *
 * @param declared schedules declared in code, saved when the engine starts
 * @param polling whether a started engine polls for due slots
 * @param pollInterval the longest a started engine waits between polls
 * @param batch the most schedules one poll transaction locks and advances
 * @param clock where "now" comes from for slots; {@code null} for the database clock
 */
public record ScheduleConfig(List<Schedule> declared, boolean polling, Duration pollInterval, int batch, Clock clock) {}
