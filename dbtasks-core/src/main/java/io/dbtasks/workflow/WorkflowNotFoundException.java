package io.dbtasks.workflow;

import io.dbtasks.DbTasksException;

/** No workflow has the id asked for. */
public class WorkflowNotFoundException extends DbTasksException {
    private static final long serialVersionUID = 1L;

    /** @param message which workflow was not found */
    public WorkflowNotFoundException(String message) {
        super(message);
    }
}
