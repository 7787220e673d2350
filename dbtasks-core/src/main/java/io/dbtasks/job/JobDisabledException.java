package io.dbtasks.job;

import io.dbtasks.DbTasksException;

/** A disabled job definition was asked to run by its code. */
public class JobDisabledException extends DbTasksException {
    /** @param code the code */
    public JobDisabledException(String code) {
        super("Job definition '" + code + "' is disabled; enable it (update with enabled = true) to run it");
    }
}
