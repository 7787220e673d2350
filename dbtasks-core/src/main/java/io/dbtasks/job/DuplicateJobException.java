package io.dbtasks.job;

import io.dbtasks.DbTasksException;

/** A job definition with that code exists already. */
public class DuplicateJobException extends DbTasksException {
    /** @param code the code */
    public DuplicateJobException(String code) {
        super("A job definition with code '" + code + "' exists already; update it instead, or choose another code");
    }
}
