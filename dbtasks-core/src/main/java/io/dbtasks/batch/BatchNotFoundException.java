package io.dbtasks.batch;

import io.dbtasks.DbTasksException;

/** No batch has the id asked for. */
public class BatchNotFoundException extends DbTasksException {
    /** @param id the id asked for */
    public BatchNotFoundException(long id) {
        super("No batch has id " + id + "; it was never created or was deleted");
    }
}
