package io.dbtasks.schedule;

import io.dbtasks.DbTasksException;

/**
 * {@link Schedules#create} named a schedule that already exists; use {@link Schedules#update} or
 * {@link Schedules#save} to change it.
 */
public class ScheduleExistsException extends DbTasksException {
    /**
     * @param message which schedule exists
     */
    public ScheduleExistsException(String message) {
        super(message);
    }
}
