package io.dbtasks;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A task to enqueue. Immutable and thread-safe; build one with {@link #builder(String)}.
 *
 * <p>Unset fields take the engine's defaults: queue {@value #DEFAULT_QUEUE}, priority 0,
 * due now (database clock), the engine's max attempts, retry policy and timeout. The queue, priority,
 * max attempts, retry policy and timeout are the request's {@link #options()}, resolved at enqueue the
 * same way as for a schedule's, a job's or a batch's tasks.
 *
 * @param kind the stable name of the handler that will run it; required
 * @param payload the payload, written as JSON by Jackson; {@code null} for none
 * @param queue the queue, or {@code null} for the default
 * @param priority higher runs first among due tasks of a queue
 * @param runAt when it becomes due, or {@code null} for now
 * @param runAfter a delay from the database's now, or {@code null}; at most one of {@code runAt} and
 *     {@code runAfter} is set
 * @param maxAttempts attempts allowed, or {@code null} for the engine default
 * @param retryPolicy the backoff between attempts, or {@code null} for the engine default
 * @param timeout how long one attempt may run before it is interrupted and TIMED_OUT, or {@code
 *     null} for the engine default
 * @param idempotencyKey a unique key: enqueuing it again returns the existing task; or {@code null}
 * @param name a display name, or {@code null}
 * @param reference a business reference, or {@code null}
 * @param traceParent the W3C Trace Context {@code traceparent} header value of the span that
 *     enqueues the task ({@code 00-<trace-id>-<span-id>-<flags>}, see
 *     https://www.w3.org/TR/trace-context/), stored with the task so its execution can continue the
 *     trace; {@code null} for none. The engine stores it and hands it to the handler ({@link
 *     TaskContext#traceParent()}) and to event listeners; it does not read it. At most {@value
 *     #MAX_TRACE_PARENT_LENGTH} characters
 * @param concurrencyKey what concurrency and rate limits count the task by (a tenant, a customer, an
 *     API host), 1 to {@value #MAX_KEY_LENGTH} characters, or {@code null} for none: a task without a
 *     key is never held back by a limit (see {@code DbTasks.limits()})
 */
public record TaskRequest(
        String kind,
        @Nullable Object payload,
        @Nullable String queue,
        int priority,
        @Nullable Instant runAt,
        @Nullable Duration runAfter,
        @Nullable Integer maxAttempts,
        @Nullable RetryPolicy retryPolicy,
        @Nullable Duration timeout,
        @Nullable String idempotencyKey,
        @Nullable String name,
        @Nullable String reference,
        @Nullable String traceParent,
        @Nullable String concurrencyKey) {

    /** The queue a task goes to when its request names none. */
    public static final String DEFAULT_QUEUE = TaskOptions.DEFAULT_QUEUE;

    /** The longest kind, queue, name or reference accepted. */
    public static final int MAX_NAME_LENGTH = 200;

    /** The longest trace parent accepted (a version-00 {@code traceparent} has 55). */
    public static final int MAX_TRACE_PARENT_LENGTH = 128;

    /** The longest idempotency key accepted. */
    public static final int MAX_KEY_LENGTH = 255;

    public TaskRequest {
        StoredText.requireName("kind", kind);
        StoredText.requireName("queue", queue);
        StoredText.requireText("idempotencyKey", idempotencyKey);
        StoredText.requireText("name", name);
        StoredText.requireText("reference", reference);
        StoredText.requireName("traceParent", traceParent);
        requireName(kind, "kind");
        if (queue != null) {
            requireName(queue, "queue");
        }
        if (maxAttempts != null && maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        if (timeout != null && (timeout.isZero() || timeout.isNegative())) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
        if (runAt != null && runAfter != null) {
            throw new IllegalArgumentException(
                    "give runAt (" + runAt + ") or runAfter (" + runAfter + "), not both: a task has one due time");
        }
        if (runAfter != null && runAfter.isNegative()) {
            throw new IllegalArgumentException("runAfter must not be negative, got " + runAfter);
        }
        if (idempotencyKey != null && (idempotencyKey.isBlank() || idempotencyKey.length() > MAX_KEY_LENGTH)) {
            throw new IllegalArgumentException(
                    "idempotencyKey must be 1 to " + MAX_KEY_LENGTH + " characters and not blank");
        }
        checkLength(name, "name");
        checkLength(reference, "reference");
        if (traceParent != null && (traceParent.isBlank() || traceParent.length() > MAX_TRACE_PARENT_LENGTH)) {
            throw new IllegalArgumentException(
                    "traceParent must be 1 to " + MAX_TRACE_PARENT_LENGTH + " characters and not blank, or null");
        }
        checkConcurrencyKey(concurrencyKey);
    }

    /**
     * A request without a concurrency key.
     *
     * @param kind as {@link TaskRequest}
     * @param payload as {@link TaskRequest}
     * @param queue as {@link TaskRequest}
     * @param priority as {@link TaskRequest}
     * @param runAt as {@link TaskRequest}
     * @param runAfter as {@link TaskRequest}
     * @param maxAttempts as {@link TaskRequest}
     * @param retryPolicy as {@link TaskRequest}
     * @param timeout as {@link TaskRequest}
     * @param idempotencyKey as {@link TaskRequest}
     * @param name as {@link TaskRequest}
     * @param reference as {@link TaskRequest}
     * @param traceParent as {@link TaskRequest}
     * @throws IllegalArgumentException as {@link TaskRequest}
     */
    public TaskRequest(
            String kind,
            @Nullable Object payload,
            @Nullable String queue,
            int priority,
            @Nullable Instant runAt,
            @Nullable Duration runAfter,
            @Nullable Integer maxAttempts,
            @Nullable RetryPolicy retryPolicy,
            @Nullable Duration timeout,
            @Nullable String idempotencyKey,
            @Nullable String name,
            @Nullable String reference,
            @Nullable String traceParent) {
        this(
                kind,
                payload,
                queue,
                priority,
                runAt,
                runAfter,
                maxAttempts,
                retryPolicy,
                timeout,
                idempotencyKey,
                name,
                reference,
                traceParent,
                null);
    }

    /**
     * Refuses a concurrency key that is blank, too long, contains {@code *} (the wildcard of limit
     * patterns, so no limit could name the key exactly) or holds text the database cannot store.
     */
    static void checkConcurrencyKey(@Nullable String concurrencyKey) {
        StoredText.requireText("concurrencyKey", concurrencyKey);
        if (concurrencyKey != null && (concurrencyKey.isBlank() || concurrencyKey.length() > MAX_KEY_LENGTH)) {
            throw new IllegalArgumentException("concurrencyKey must be 1 to " + MAX_KEY_LENGTH
                    + " characters and not blank, or null for none; got " + concurrencyKey.length()
                    + " characters. Use a short identifier (a tenant or customer id), not the payload");
        }
        if (concurrencyKey != null && concurrencyKey.indexOf('*') >= 0) {
            throw new IllegalArgumentException("concurrencyKey must not contain '*', the wildcard of limit"
                    + " patterns (a limit could not name such a key exactly); got '" + concurrencyKey
                    + "'. Use another separator, such as '-' or ':'");
        }
    }

    /**
     * @return the queue, priority, max attempts, retry policy, timeout and concurrency key of this
     *     request; a field unset here is {@code null} there (the priority is never {@code null}: unset it is {@value
     *     TaskOptions#DEFAULT_PRIORITY}, the default)
     */
    public TaskOptions options() {
        return new TaskOptions(queue, priority, maxAttempts, retryPolicy, timeout, concurrencyKey);
    }

    /**
     * @param traceParent the W3C {@code traceparent} of the enqueuing span, or {@code null}
     * @return a copy of this request carrying {@code traceParent}
     * @throws IllegalArgumentException if it is blank or too long
     */
    public TaskRequest withTraceParent(@Nullable String traceParent) {
        return new TaskRequest(
                kind,
                payload,
                queue,
                priority,
                runAt,
                runAfter,
                maxAttempts,
                retryPolicy,
                timeout,
                idempotencyKey,
                name,
                reference,
                traceParent,
                concurrencyKey);
    }

    /**
     * @param concurrencyKey the key limits and fair claims count the task by, or {@code null} for none
     * @return a copy of this request carrying {@code concurrencyKey}
     * @throws IllegalArgumentException if it is blank, longer than {@value #MAX_KEY_LENGTH} characters
     *     or contains {@code *}
     */
    public TaskRequest withConcurrencyKey(@Nullable String concurrencyKey) {
        return new TaskRequest(
                kind,
                payload,
                queue,
                priority,
                runAt,
                runAfter,
                maxAttempts,
                retryPolicy,
                timeout,
                idempotencyKey,
                name,
                reference,
                traceParent,
                concurrencyKey);
    }

    /**
     * Starts a request for a task of {@code kind}.
     *
     * @param kind the handler's kind, 1 to {@value #MAX_NAME_LENGTH} characters
     * @return a builder
     */
    public static Builder builder(String kind) {
        return new Builder(kind);
    }

    /**
     * A request for {@code kind} with {@code payload} and every other field defaulted.
     *
     * @param kind the handler's kind
     * @param payload the payload, or {@code null}
     * @return the request
     * @throws IllegalArgumentException if {@code kind} is blank or too long
     */
    public static TaskRequest of(String kind, @Nullable Object payload) {
        return builder(kind).payload(payload).build();
    }

    /**
     * A request for a typed kind with {@code payload} and every other field defaulted; the compiler
     * checks that the payload is of the kind's type.
     *
     * @param kind the kind
     * @param payload the payload, of the kind's type; {@code null} for none
     * @param <P> the payload type
     * @return the request
     */
    public static <P> TaskRequest of(TaskKind<P> kind, @Nullable P payload) {
        return builder(kind.name()).payload(payload).build();
    }

    /**
     * A builder for a request of a typed kind.
     *
     * @param kind the kind
     * @return the builder, with the kind's name set
     */
    public static Builder builder(TaskKind<?> kind) {
        return builder(kind.name());
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

    /** Builds a {@link TaskRequest}. Not thread-safe. */
    public static final class Builder {
        private final String kind;
        private @Nullable Object payload;
        private @Nullable String queue;
        private int priority;
        private @Nullable Instant runAt;
        private @Nullable Duration runAfter;
        private @Nullable Integer maxAttempts;
        private @Nullable RetryPolicy retryPolicy;
        private @Nullable Duration timeout;
        private @Nullable String idempotencyKey;
        private @Nullable String name;
        private @Nullable String reference;
        private @Nullable String traceParent;
        private @Nullable String concurrencyKey;

        private Builder(String kind) {
            this.kind = kind;
        }

        /**
         * @param payload written as JSON; {@code null} for none
         * @return this
         */
        public Builder payload(@Nullable Object payload) {
            this.payload = payload;
            return this;
        }

        /**
         * @param queue the queue name
         * @return this
         */
        public Builder queue(String queue) {
            this.queue = queue;
            return this;
        }

        /**
         * @param priority higher runs first
         * @return this
         */
        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        /**
         * @param runAt when due; {@code null} for now
         * @return this
         */
        public Builder runAt(@Nullable Instant runAt) {
            this.runAt = runAt;
            return this;
        }

        /**
         * @param delay due this long after the database's now
         * @return this
         */
        public Builder runAfter(Duration delay) {
            this.runAfter = delay;
            return this;
        }

        /**
         * Sets the queue, priority, max attempts, retry policy and timeout at once; a field unset in
         * {@code options} is unset here (the engine's default).
         *
         * @param options the options
         * @return this
         * @throws NullPointerException if {@code options} is {@code null}
         */
        public Builder options(TaskOptions options) {
            this.queue = options.queue();
            this.priority = options.priority() != null ? options.priority() : TaskOptions.DEFAULT_PRIORITY;
            this.maxAttempts = options.maxAttempts();
            this.retryPolicy = options.retryPolicy();
            this.timeout = options.timeout();
            this.concurrencyKey = options.concurrencyKey();
            return this;
        }

        /**
         * @param maxAttempts at least 1
         * @return this
         */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * @param retryPolicy the backoff
         * @return this
         */
        public Builder retryPolicy(RetryPolicy retryPolicy) {
            this.retryPolicy = retryPolicy;
            return this;
        }

        /**
         * @param timeout per attempt, positive
         * @return this
         */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * @param key a unique key, at most {@value TaskRequest#MAX_KEY_LENGTH} characters
         * @return this
         */
        public Builder idempotencyKey(String key) {
            this.idempotencyKey = key;
            return this;
        }

        /**
         * @param name a display name
         * @return this
         */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * @param reference a business reference
         * @return this
         */
        public Builder reference(String reference) {
            this.reference = reference;
            return this;
        }

        /**
         * @param traceParent the W3C {@code traceparent} of the enqueuing span, or {@code null}; see
         *     {@link TaskRequest#traceParent()}
         * @return this
         */
        public Builder traceParent(@Nullable String traceParent) {
            this.traceParent = traceParent;
            return this;
        }

        /**
         * @param concurrencyKey the key concurrency and rate limits count the task by (a tenant, a
         *     customer, an API host), 1 to {@value #MAX_KEY_LENGTH} characters, or {@code null} for none
         * @return this
         */
        public Builder concurrencyKey(@Nullable String concurrencyKey) {
            this.concurrencyKey = concurrencyKey;
            return this;
        }

        /**
         * @return the request
         * @throws IllegalArgumentException if a field is out of range, or text holds what {@link
         *     StoredText} refuses (NUL, a lone surrogate; a control character in the kind or queue)
         * @throws NullPointerException if the kind is {@code null}
         */
        public TaskRequest build() {
            return new TaskRequest(
                    kind,
                    payload,
                    queue,
                    priority,
                    runAt,
                    runAfter,
                    maxAttempts,
                    retryPolicy,
                    timeout,
                    idempotencyKey,
                    name,
                    reference,
                    traceParent,
                    concurrencyKey);
        }
    }
}
