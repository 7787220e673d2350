package io.dbtasks.server.jobs;

import io.dbtasks.TaskStatus;
import io.dbtasks.job.JobDefinition;
import io.dbtasks.job.StoredJob;
import java.time.Instant;
import java.util.List;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A job definition as the API shows it, with its last run.
 *
 * @param id the row id; {@code after} of the next page
 * @param code the unique code
 * @param name the display name
 * @param description free text, or {@code null}
 * @param businessType the business type
 * @param businessId the business id, or {@code null}
 * @param bean the target bean
 * @param method the target method
 * @param parameterTypes the target's parameter types
 * @param arguments the arguments, as JSON (as text if the stored text is not JSON), or {@code null} when
 *     hidden from the caller ({@code argumentsOmitted})
 * @param queue the queue, or {@code null} for the default
 * @param maxAttempts attempts per run
 * @param backoff FIXED or EXPONENTIAL
 * @param retryDelayMillis the first wait between attempts, in milliseconds
 * @param cron the cron, or {@code null}
 * @param timeZone the cron's time zone, or {@code null}
 * @param enabled whether runs are allowed
 * @param runs runs enqueued so far
 * @param lastTaskId the latest run's task, or {@code null}
 * @param lastStatus that task's status, or {@code null}
 * @param lastError that task's last error, or {@code null}
 * @param createdAt when the definition was created
 * @param updatedAt when it was last changed
 * @param argumentsOmitted whether {@code arguments} is {@code null} because the caller may not see
 *     payloads ({@code dbtasks.server.security.hide-payloads-from-viewers})
 */
public record JobResponse(
        long id,
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
        int maxAttempts,
        String backoff,
        long retryDelayMillis,
        String cron,
        String timeZone,
        boolean enabled,
        long runs,
        Long lastTaskId,
        TaskStatus lastStatus,
        String lastError,
        Instant createdAt,
        Instant updatedAt,
        boolean argumentsOmitted) {

    /**
     * @param job the stored definition
     * @param mapper parses the stored arguments
     * @param showArguments false to leave the arguments out ({@code null}), for a caller who may not
     *     see payloads
     * @return the response
     */
    static JobResponse of(StoredJob job, JsonMapper mapper, boolean showArguments) {
        JobDefinition d = job.definition();
        JsonNode args = null;
        if (showArguments) {
            try {
                args = mapper.readTree(d.arguments());
            } catch (JacksonException e) {
                args = mapper.getNodeFactory().stringNode(d.arguments());
            }
        }
        return new JobResponse(
                job.id(),
                d.code(),
                d.name(),
                d.description(),
                d.businessType(),
                d.businessId(),
                d.target().bean(),
                d.target().method(),
                d.target().parameterTypes(),
                args,
                d.queue(),
                d.maxAttempts(),
                d.retryPolicy().backoff().name(),
                d.retryPolicy().initial().toMillis(),
                d.cron(),
                d.timeZone(),
                d.enabled(),
                job.runs(),
                job.lastTaskId(),
                job.lastStatus(),
                job.lastError(),
                job.createdAt(),
                job.updatedAt(),
                !showArguments);
    }
}
