package io.dbtasks;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Due PENDING tasks of one queue, kind and job target that this engine does not claim, because it
 * has no handler for the kind or does not allow-list the job target ({@link DbTasks#foreignTasks()}).
 * They stay untouched for an engine that can run them. When no live engine of the queue can, they
 * are failed once that has lasted the engine's {@code unclaimableGrace}.
 *
 * @param queue the queue
 * @param kind the tasks' kind
 * @param jobTarget the job target ({@code bean.method(types)}) of job runs, {@code null} for other tasks
 * @param tasks how many such tasks are due, at least 1
 * @param runnableElsewhere whether a live engine that works the queue can run them
 * @param oldestRunAt the earliest due time among them, database time
 */
public record ForeignTasks(
        String queue,
        String kind,
        @Nullable String jobTarget,
        long tasks,
        boolean runnableElsewhere,
        Instant oldestRunAt) {
    /** Checks the names. */
    public ForeignTasks {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(kind, "kind");
    }
}
