package io.dbtasks.internal.job;

import java.util.List;

/**
 * The payload of a {@code dbtasks.job} task: the definition as it was when the run was enqueued,
 * so that the task shows what it ran and runs the same however the definition changes later.
 *
 * @param code the definition's code
 * @param runNo the run's number
 * @param businessType the business type
 * @param businessId the business id, or {@code null}
 * @param bean the target bean name
 * @param method the target method name
 * @param parameterTypes the target's parameter type names
 * @param arguments the JSON array of arguments, as text
 */
public record JobTaskPayload(
        String code,
        long runNo,
        String businessType,
        String businessId,
        String bean,
        String method,
        List<String> parameterTypes,
        String arguments) {}
