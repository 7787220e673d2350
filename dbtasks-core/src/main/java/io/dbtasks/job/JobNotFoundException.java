package io.dbtasks.job;

import io.dbtasks.DbTasksException;

/** No job definition has the code asked for. */
public class JobNotFoundException extends DbTasksException {
    /** @param code the code asked for */
    public JobNotFoundException(String code) {
        super("No job definition has code '" + code + "'; create it first or list the definitions");
    }
}
