package io.dbtasks;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A task search for {@link DbTasks#search}, {@link DbTasks#searchSummaries}, {@link
 * DbTasks#searchIds} and {@link DbTasks#count}: eleven filters, every one optional, all given ones must
 * match, and a keyset cursor. Results come newest first (by id, which is unique, so equal creation
 * times never reorder or repeat a row between pages); the next page is the same query with {@link
 * #before} set to the page's {@code next} cursor. Each page costs the same however deep it is.
 *
 * <p>Build one with {@link #builder()}; immutable and thread-safe.
 *
 * @param status only tasks in this state, or {@code null}
 * @param queue exact queue name, or {@code null}
 * @param kind exact kind, or {@code null}
 * @param key exact idempotency key, or {@code null}
 * @param reference exact business reference, or {@code null}
 * @param createdFrom only tasks created at or after this instant, or {@code null}
 * @param createdTo only tasks created before this instant, or {@code null}
 * @param id exact task id, or {@code null}
 * @param payloadPath field names (or array indexes, as digits) leading into the JSON payload, such
 *     as {@code [order, id]}; {@code null} for no payload filter
 * @param payloadValue the text the value at {@code payloadPath} must equal (a JSON string, number or
 *     boolean as written); required with a path, {@code null} without one
 * @param before the keyset cursor: only tasks with a lower id; {@code null} for the first page
 * @param timeout the longest one statement of the search may run, whole seconds (at least one);
 *     {@code null} for no limit
 * @param concurrencyKey exact concurrency key, or {@code null}
 */
public record TaskQuery(
        TaskStatus status,
        String queue,
        String kind,
        String key,
        String reference,
        Instant createdFrom,
        Instant createdTo,
        Long id,
        List<String> payloadPath,
        String payloadValue,
        Long before,
        Duration timeout,
        String concurrencyKey) {

    /** A segment of a payload path: letters, digits, '_' and '-', 1 to 100 characters. */
    public static final Pattern PATH_SEGMENT = Pattern.compile("[A-Za-z0-9_\\-]{1,100}");

    /** Matches every task, first page, no time limit. */
    public static final TaskQuery ALL = builder().build();

    /**
     * @throws IllegalArgumentException if a path segment is not letters, digits, '_' or '-', if a
     *     path comes without a value or a value without a path, or if the timeout is under a second
     */
    public TaskQuery {
        if (payloadPath != null) {
            if (payloadPath.isEmpty()) {
                throw new IllegalArgumentException("payload path must name at least one field, e.g. order.id");
            }
            for (String seg : payloadPath) {
                if (seg == null || !PATH_SEGMENT.matcher(seg).matches()) {
                    throw new IllegalArgumentException(
                            "payload path must be dotted field names (letters, digits, _ and -), e.g. order.id");
                }
            }
            payloadPath = List.copyOf(payloadPath);
            if (payloadValue == null) {
                throw new IllegalArgumentException("payload value is required with a payload path");
            }
        } else if (payloadValue != null) {
            throw new IllegalArgumentException("payload value needs a payload path, e.g. order.id");
        }
        if (timeout != null && timeout.toSeconds() < 1) {
            throw new IllegalArgumentException("timeout must be at least one second, got " + timeout);
        }
    }

    /** @return a builder with no filter, no cursor and no time limit */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding this query's fields */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.status = status;
        b.queue = queue;
        b.kind = kind;
        b.key = key;
        b.reference = reference;
        b.createdFrom = createdFrom;
        b.createdTo = createdTo;
        b.id = id;
        b.payloadPath = payloadPath;
        b.payloadValue = payloadValue;
        b.before = before;
        b.timeout = timeout;
        b.concurrencyKey = concurrencyKey;
        return b;
    }

    /**
     * @param cursor the {@code next} of the previous page, or {@code null} for the first page
     * @return this query at that cursor
     */
    public TaskQuery before(Long cursor) {
        return toBuilder().before(cursor).build();
    }

    /** @return whether the query has a payload filter */
    public boolean hasPayloadFilter() {
        return payloadPath != null;
    }

    /** Builds a {@link TaskQuery}; every setter takes {@code null} for "not given". Not thread-safe. */
    public static final class Builder {
        private TaskStatus status;
        private String queue;
        private String kind;
        private String key;
        private String reference;
        private Instant createdFrom;
        private Instant createdTo;
        private Long id;
        private List<String> payloadPath;
        private String payloadValue;
        private Long before;
        private Duration timeout;
        private String concurrencyKey;

        private Builder() {}

        /** @return this builder; {@code status} may be {@code null} */
        public Builder status(TaskStatus status) {
            this.status = status;
            return this;
        }

        /** @return this builder; {@code queue} may be {@code null} */
        public Builder queue(String queue) {
            this.queue = queue;
            return this;
        }

        /** @return this builder; {@code kind} may be {@code null} */
        public Builder kind(String kind) {
            this.kind = kind;
            return this;
        }

        /** @return this builder; {@code key} (an idempotency key) may be {@code null} */
        public Builder key(String key) {
            this.key = key;
            return this;
        }

        /** @return this builder; {@code concurrencyKey} (exact) may be {@code null} */
        public Builder concurrencyKey(String concurrencyKey) {
            this.concurrencyKey = concurrencyKey;
            return this;
        }

        /** @return this builder; {@code reference} may be {@code null} */
        public Builder reference(String reference) {
            this.reference = reference;
            return this;
        }

        /**
         * @param from created at or after, or {@code null}
         * @param to created before, or {@code null}
         * @return this builder
         */
        public Builder created(Instant from, Instant to) {
            this.createdFrom = from;
            this.createdTo = to;
            return this;
        }

        /** @return this builder; {@code id} may be {@code null} */
        public Builder id(Long id) {
            this.id = id;
            return this;
        }

        /**
         * @param path field names into the payload, or {@code null} to clear the payload filter
         * @param value the text the field must equal; required with a path
         * @return this builder
         */
        public Builder payload(List<String> path, String value) {
            this.payloadPath = path;
            this.payloadValue = value;
            return this;
        }

        /** @return this builder; {@code cursor} is the previous page's {@code next}, or {@code null} */
        public Builder before(Long cursor) {
            this.before = cursor;
            return this;
        }

        /** @return this builder; {@code timeout} per statement, at least one second, or {@code null} */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * @return the query
         * @throws IllegalArgumentException as {@link TaskQuery#TaskQuery} says
         */
        public TaskQuery build() {
            return new TaskQuery(
                    status,
                    queue,
                    kind,
                    key,
                    reference,
                    createdFrom,
                    createdTo,
                    id,
                    payloadPath,
                    payloadValue,
                    before,
                    timeout,
                    concurrencyKey);
        }
    }
}
