package io.dbtasks.schedule;

import org.jspecify.annotations.Nullable;

/**
 * A schedule, or a part of one, is malformed: a cron expression that does not parse or never fires,
 * a period that is not positive, a name out of range. The message says what is wrong and how to
 * write it instead. Thrown when the schedule is built, before anything is stored.
 */
public class InvalidScheduleException extends IllegalArgumentException {
    /**
     * @param message what is wrong and what to do
     */
    public InvalidScheduleException(String message) {
        super(message);
    }

    /**
     * @param message what is wrong and what to do
     * @param cause the parser's failure, may be {@code null}
     */
    public InvalidScheduleException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
