package io.dbtasks.job;

import io.dbtasks.RetryPolicy;
import io.dbtasks.StoredText;
import io.dbtasks.TaskOptions;
import io.dbtasks.schedule.Trigger;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A job definition as written by its owner: what to call, with which arguments, under which
 * business type and id, how to retry, and optionally when (a cron). Immutable; build one with
 * {@link #builder(String)}.
 *
 * <p>A run's task takes this definition's {@link #options()}: its queue, max attempts and retry
 * policy, stored with the definition. A job stores no priority or timeout, so its tasks take the
 * engine's defaults for them; {@link Builder#options(TaskOptions)} refuses options that set either.
 *
 * @param code the unique code the job is run by, 1 to 200 characters
 * @param name a display name, 1 to 200 characters
 * @param description free text, or {@code null}
 * @param businessType the business type runs are grouped by, 1 to 200 characters
 * @param businessId the business id, at most 200 characters, or {@code null}
 * @param target the method to call
 * @param arguments the arguments as a JSON array, one element per parameter of the target; read by
 *     Jackson as the method's declared parameter types when the job runs, never before
 * @param queue the queue its tasks go to, or {@code null} for the engine's default queue
 * @param maxAttempts attempts per run, at least 1
 * @param retryPolicy the backoff between attempts of a run
 * @param cron a cron expression with seconds in Spring syntax (for example {@code 0 * * * * *}, every
 *     minute), or {@code null} for a job run only on demand; an enabled definition with a cron has a
 *     schedule {@code dbtasks.job:<id>} whose every slot runs it once across the cluster
 * @param timeZone the cron's time zone id, or {@code null} for UTC
 * @param enabled whether runs are allowed; a disabled job is skipped by bulk runs and refused by
 *     {@link JobDefinitions#run(String)}
 */
public record JobDefinition(
        String code,
        String name,
        @Nullable String description,
        String businessType,
        @Nullable String businessId,
        JobTarget target,
        String arguments,
        @Nullable String queue,
        int maxAttempts,
        RetryPolicy retryPolicy,
        @Nullable String cron,
        @Nullable String timeZone,
        boolean enabled) {
    /** The longest code, name, business type, business id or queue accepted. */
    public static final int MAX_NAME_LENGTH = 200;
    /**
     * Attempts per run when the definition does not say (two retries after the first attempt): the
     * engine's built-in {@link TaskOptions#DEFAULT_MAX_ATTEMPTS}. Stored with the definition, so a
     * run keeps it whatever {@code DbTasks.Builder.defaultMaxAttempts} says.
     */
    public static final int DEFAULT_MAX_ATTEMPTS = TaskOptions.DEFAULT_MAX_ATTEMPTS;
    /**
     * The backoff when the definition does not say: a fixed 60 seconds, stored with the definition.
     * It is a job's own default, not the engine's {@link RetryPolicy#DEFAULT}: a job's runs are
     * business operations retried at a steady pace.
     */
    public static final RetryPolicy DEFAULT_RETRY = RetryPolicy.fixed(Duration.ofSeconds(60));

    /**
     * @throws NullPointerException if a required field is {@code null}
     * @throws IllegalArgumentException if a field is blank, too long or out of range, holds what
     *     {@link StoredText} refuses (NUL, a lone surrogate; a control character in a name), or the
     *     cron does not parse ({@link io.dbtasks.schedule.InvalidScheduleException})
     */
    public JobDefinition {
        StoredText.requireName("code", code);
        StoredText.requireText("name", name);
        StoredText.requireText("description", description);
        StoredText.requireName("businessType", businessType);
        StoredText.requireText("businessId", businessId);
        StoredText.requireName("queue", queue);
        StoredText.requireText("arguments", arguments);
        StoredText.requireName("cron", cron);
        StoredText.requireName("timeZone", timeZone);
        requireName(code, "code");
        requireName(name, "name");
        requireName(businessType, "businessType");
        checkLength(businessId, "businessId");
        if (queue != null) {
            requireName(queue, "queue");
        }
        Objects.requireNonNull(target, "target");
        arguments = arguments == null || arguments.isBlank() ? "[]" : arguments.strip();
        if (!arguments.startsWith("[")) {
            throw new IllegalArgumentException("arguments must be a JSON array with one element per parameter of "
                    + target + ", such as [10001, \"admin\"]; got: " + abbreviate(arguments));
        }
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        Objects.requireNonNull(retryPolicy, "retryPolicy");
        java.time.ZoneId zone = Trigger.DEFAULT_ZONE;
        if (timeZone != null) {
            try {
                zone = java.time.ZoneId.of(timeZone);
            } catch (java.time.DateTimeException e) {
                throw new IllegalArgumentException(
                        "timeZone '" + timeZone + "' is not a time zone id; use one such as Europe/Berlin or UTC");
            }
        }
        if (cron != null) {
            Trigger.cron(cron, zone); // throws InvalidScheduleException saying what is wrong
        }
    }

    /**
     * @return the cron trigger of this definition ({@linkplain io.dbtasks.schedule.CronSyntax#SPRING
     *     Spring syntax}, seconds first, in {@link #timeZone()} or UTC), or empty without a cron
     */
    public java.util.Optional<Trigger> trigger() {
        return cron == null
                ? java.util.Optional.empty()
                : java.util.Optional.of(
                        Trigger.cron(cron, timeZone == null ? Trigger.DEFAULT_ZONE : java.time.ZoneId.of(timeZone)));
    }

    /**
     * @param code the job's unique code
     * @return a builder with the defaults: enabled, {@value #DEFAULT_MAX_ATTEMPTS} attempts, {@link
     *     #DEFAULT_RETRY}, no arguments, no cron
     */
    public static Builder builder(String code) {
        return new Builder(code);
    }

    /**
     * @return the options of a run's task: this definition's queue ({@code null} for the default),
     *     max attempts and retry policy; priority and timeout {@code null} (the engine's defaults)
     */
    public TaskOptions options() {
        return new TaskOptions(queue, null, maxAttempts, retryPolicy, null);
    }

    /** @return a builder holding this definition's fields, to change some */
    public Builder toBuilder() {
        return new Builder(code)
                .name(name)
                .description(description)
                .business(businessType, businessId)
                .target(target)
                .arguments(arguments)
                .queue(queue)
                .maxAttempts(maxAttempts)
                .retryPolicy(retryPolicy)
                .cron(cron, timeZone)
                .enabled(enabled);
    }

    private static void requireName(String value, String field) {
        Objects.requireNonNull(value, field);
        if (value.isBlank() || value.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException(
                    field + " must be 1 to " + MAX_NAME_LENGTH + " characters and not blank, got '" + value + "'");
        }
    }

    private static void checkLength(@Nullable String value, String field) {
        if (value != null && value.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException(field + " must be at most " + MAX_NAME_LENGTH + " characters");
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "...";
    }

    /** Builds a {@link JobDefinition}. Not thread-safe. */
    public static final class Builder {
        private final String code;
        private String name;
        private @Nullable String description;
        private @Nullable String businessType;
        private @Nullable String businessId;
        private @Nullable JobTarget target;
        private @Nullable String arguments = "[]";
        private @Nullable String queue;
        private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
        private RetryPolicy retryPolicy = DEFAULT_RETRY;
        private @Nullable String cron;
        private @Nullable String timeZone;
        private boolean enabled = true;

        private Builder(String code) {
            this.code = code;
            this.name = code;
        }

        /**
         * @param name the display name; defaults to the code
         * @return this
         */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * @param description free text, or {@code null}
         * @return this
         */
        public Builder description(@Nullable String description) {
            this.description = description;
            return this;
        }

        /**
         * @param businessType the business type, required
         * @param businessId the business id, or {@code null}
         * @return this
         */
        public Builder business(String businessType, @Nullable String businessId) {
            this.businessType = businessType;
            this.businessId = businessId;
            return this;
        }

        /**
         * @param target the method to call, required
         * @return this
         */
        public Builder target(JobTarget target) {
            this.target = target;
            return this;
        }

        /**
         * @param argumentsJson a JSON array, one element per parameter; {@code null} for none
         * @return this
         */
        public Builder arguments(@Nullable String argumentsJson) {
            this.arguments = argumentsJson;
            return this;
        }

        /**
         * @param queue the queue, or {@code null} for the default
         * @return this
         */
        public Builder queue(@Nullable String queue) {
            this.queue = queue;
            return this;
        }

        /**
         * Sets the queue, max attempts and retry policy at once. A field unset in {@code options}
         * takes the default: the engine's default queue, {@value JobDefinition#DEFAULT_MAX_ATTEMPTS}
         * attempts, {@link JobDefinition#DEFAULT_RETRY}.
         *
         * @param options the options; priority and timeout must be unset
         * @return this
         * @throws IllegalArgumentException if {@code options} sets a priority or a timeout, which a
         *     job does not store
         * @throws NullPointerException if {@code options} is {@code null}
         */
        public Builder options(TaskOptions options) {
            Objects.requireNonNull(options, "options");
            if (options.priority() != null || options.timeout() != null) {
                throw new IllegalArgumentException("a job stores its queue, max attempts and retry policy only;"
                        + " leave priority and timeout unset in its options (got priority " + options.priority()
                        + ", timeout " + options.timeout() + "): its tasks take the engine's defaults for them");
            }
            this.queue = options.queue();
            this.maxAttempts = options.maxAttempts() != null ? options.maxAttempts() : DEFAULT_MAX_ATTEMPTS;
            this.retryPolicy = options.retryPolicy() != null ? options.retryPolicy() : DEFAULT_RETRY;
            return this;
        }

        /**
         * @param maxAttempts attempts per run, at least 1
         * @return this
         */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * @param retryPolicy the backoff between attempts
         * @return this
         */
        public Builder retryPolicy(RetryPolicy retryPolicy) {
            this.retryPolicy = retryPolicy;
            return this;
        }

        /**
         * @param cron a cron expression with seconds, or {@code null}
         * @param timeZone its time zone id, or {@code null} for UTC
         * @return this
         */
        public Builder cron(@Nullable String cron, @Nullable String timeZone) {
            this.cron = cron;
            this.timeZone = timeZone;
            return this;
        }

        /**
         * @param enabled whether runs are allowed
         * @return this
         */
        public Builder enabled(boolean enabled) {
            this.enabled = enabled;
            return this;
        }

        /**
         * @return the definition
         * @throws NullPointerException if the business type or the target is missing
         * @throws IllegalArgumentException if a field is out of range
         */
        public JobDefinition build() {
            return new JobDefinition(
                    code,
                    name,
                    description,
                    businessType,
                    businessId,
                    target,
                    arguments,
                    queue,
                    maxAttempts,
                    retryPolicy,
                    cron,
                    timeZone,
                    enabled);
        }
    }
}
