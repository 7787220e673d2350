package io.dbtasks.job;

import io.dbtasks.TaskContext;
import org.jspecify.annotations.Nullable;

/**
 * One call of a job's target, as a {@link JobTargetInvoker} receives it.
 *
 * @param code the definition's code
 * @param businessType its business type
 * @param businessId its business id, or {@code null}
 * @param target the method named by the definition, as stored text
 * @param arguments the arguments as a JSON array, as stored text
 * @param context the task's context (id, attempt, fencing token, lease)
 */
public record JobInvocation(
        String code,
        String businessType,
        @Nullable String businessId,
        JobTarget target,
        String arguments,
        TaskContext context) {}
