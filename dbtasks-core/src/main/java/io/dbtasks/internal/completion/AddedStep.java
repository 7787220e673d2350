package io.dbtasks.internal.completion;

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
public record AddedStep(String name, TaskRequest request, List<String> downstream) {
    /**
     * @param name the new step's name
     * @param request its task
     * @param downstream the steps that wait for it too, copied
     */
    public AddedStep {
        downstream = List.copyOf(downstream);
    }
}
