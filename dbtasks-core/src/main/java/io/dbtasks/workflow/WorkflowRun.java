package io.dbtasks.workflow;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A workflow as stored: its steps with their tasks and states. A snapshot; read it again with
 * {@link Workflows#find(long)} to see later changes.
 *
 * @param id the workflow's id, assigned by the database
 * @param name its display name
 * @param createdAt when it was inserted, by the database clock
 * @param steps its steps, in the order they were inserted (each after its dependencies)
 */
public record WorkflowRun(long id, String name, Instant createdAt, List<StepState> steps) {
    /**
     * @param id the workflow's id
     * @param name its name
     * @param createdAt when it was inserted
     * @param steps its steps, copied
     */
    public WorkflowRun {
        steps = List.copyOf(steps);
    }

    /**
     * @param step a step name
     * @return that step, or empty if the workflow has none by that name
     */
    public Optional<StepState> step(String step) {
        return steps.stream().filter(s -> s.name().equals(step)).findFirst();
    }

    /**
     * @param step a step name
     * @return the id of that step's task
     * @throws IllegalArgumentException if the workflow has no such step
     */
    public long taskId(String step) {
        return step(step)
                .orElseThrow(() -> new IllegalArgumentException("Workflow " + id + " has no step '" + step + "'"))
                .taskId();
    }
}
