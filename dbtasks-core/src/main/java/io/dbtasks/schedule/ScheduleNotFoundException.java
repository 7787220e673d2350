package io.dbtasks.schedule;

import io.dbtasks.DbTasksException;

/** No schedule has the name an operation named: it was never created, or it was deleted. */
public class ScheduleNotFoundException extends DbTasksException {
    /**
     * @param message which schedule was looked for
     */
    public ScheduleNotFoundException(String message) {
        super(message);
    }
}
