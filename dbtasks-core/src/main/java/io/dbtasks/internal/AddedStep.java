package io.dbtasks.internal;

import io.dbtasks.TaskRequest;
import java.util.List;

/**
 * A step a running step adds to its workflow ({@link io.dbtasks.TaskContext#addStep}), inserted
 * with the adding attempt's success.
 *
 * @param name the new step's name
 * @param request its task
 * @param downstream the names of the steps that wait for it too
 */
record AddedStep(String name, TaskRequest request, List<String> downstream) {
    AddedStep {
        downstream = List.copyOf(downstream);
    }
}
