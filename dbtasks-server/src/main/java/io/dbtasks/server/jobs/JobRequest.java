package io.dbtasks.server.jobs;

import java.util.List;
import tools.jackson.databind.JsonNode;

/**
 * The body of {@code POST /api/jobs} and {@code PUT /api/jobs/{code}}: the columns of a job
 * definition ({@code dbtasks_job}), without its status.
 *
 * @param code the unique code; required on create, optional on update (must match the path)
 * @param name the display name; defaults to the code
 * @param description free text, or {@code null}
 * @param businessType the business type; required
 * @param businessId the business id, or {@code null}
 * @param bean the target bean's name; required
 * @param method the target method's name; required
 * @param parameterTypes the method's declared parameter types, such as {@code java.lang.Long}; none
 *     if {@code null}
 * @param arguments a JSON array with one element per parameter; none if {@code null}
 * @param queue the queue, or {@code null} for the default
 * @param maxAttempts attempts per run, default 3
 * @param retryDelayMillis fixed wait between attempts in milliseconds, default 60,000
 * @param cron a cron expression with seconds, or {@code null}
 * @param timeZone the cron's time zone, or {@code null} for UTC
 * @param enabled whether runs are allowed, default true
 */
public record JobRequest(
        String code,
        String name,
        String description,
        String businessType,
        String businessId,
        String bean,
        String method,
        List<String> parameterTypes,
        JsonNode arguments,
        String queue,
        Integer maxAttempts,
        Long retryDelayMillis,
        String cron,
        String timeZone,
        Boolean enabled) {}
