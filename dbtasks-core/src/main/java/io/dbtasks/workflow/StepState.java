package io.dbtasks.workflow;

import io.dbtasks.TaskStatus;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One step of a stored workflow.
 *
 * @param name its name, unique in the workflow
 * @param taskId the id of its task (see {@link io.dbtasks.DbTasks#find(long)} and its attempts)
 * @param status its task's state; WAITING while a dependency has not succeeded
 * @param dependencies the steps it waits for
 * @param result the result its handler stored on success ({@link
 *     io.dbtasks.TaskContext#setResult(String)}), or {@code null}
 * @param lastError its task's last error, for a step cancelled by a dependency the reason, or
 *     {@code null}
 */
public record StepState(
        String name,
        long taskId,
        TaskStatus status,
        List<Dependency> dependencies,
        @Nullable String result,
        @Nullable String lastError) {
    /**
     * @param name its name
     * @param taskId its task's id
     * @param status its state
     * @param dependencies the steps it waits for, copied
     * @param result its stored result, or {@code null}
     * @param lastError its last error, or {@code null}
     */
    public StepState {
        dependencies = List.copyOf(dependencies);
    }
}
