package io.dbtasks;

import org.jspecify.annotations.Nullable;

/**
 * Criteria for {@link DbTasks#list(TaskFilter, int, int)}; each {@code null} field matches all.
 *
 * @param status only tasks in this state, or {@code null}
 * @param queue only tasks of this queue, or {@code null}
 * @param kind only tasks of this kind, or {@code null}
 */
public record TaskFilter(
        @Nullable TaskStatus status,
        @Nullable String queue,
        @Nullable String kind) {
    /** A filter that matches every task. */
    public static final TaskFilter ALL = new TaskFilter(null, null, null);
}
