/**
 * The API of dbtasks: the entry point {@link io.dbtasks.DbTasks}, the tasks it stores ({@link
 * io.dbtasks.TaskRequest}, {@link io.dbtasks.Task}), the handlers that run them ({@link
 * io.dbtasks.TaskHandler}, {@link io.dbtasks.TaskContext}) and the exceptions it throws.
 *
 * <p>Types here are non-null unless annotated {@link org.jspecify.annotations.Nullable}. A handler's
 * payload is non-null except for a kind without payload ({@code Void}), whose only value is {@code
 * null}.
 */
@NullMarked
package io.dbtasks;

import org.jspecify.annotations.NullMarked;
