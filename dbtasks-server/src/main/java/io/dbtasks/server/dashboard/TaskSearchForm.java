package io.dbtasks.server.dashboard;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;

/**
 * The dashboard's task filter as sent by its search form and its bulk-action forms: every field
 * optional, blank meaning "not given". Bean Validation checks each field's form (a bad one is
 * answered 400 naming the field and what it takes); {@link #toSearch()} reads the checked form into
 * a {@link TaskSearch}. Mutable, for binding only; not thread-safe.
 */
public class TaskSearchForm {
    /** The longest text a filter field takes, in characters. */
    static final int MAX_TEXT = 1000;

    @Pattern(
            regexp = "\\s*(?i:WAITING|PENDING|RUNNING|SUCCEEDED|FAILED|CANCELLED)?\\s*",
            message = "state must be one of [WAITING, PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED]")
    private String state;

    @Size(max = MAX_TEXT, message = "queue must be at most " + MAX_TEXT + " characters")
    private String queue;

    @Size(max = MAX_TEXT, message = "kind must be at most " + MAX_TEXT + " characters")
    private String kind;

    @Size(max = MAX_TEXT, message = "key must be at most " + MAX_TEXT + " characters")
    private String key;

    @Size(max = MAX_TEXT, message = "reference must be at most " + MAX_TEXT + " characters")
    private String reference;

    private String from;

    private String to;

    @Pattern(regexp = "\\s*([0-9]{1,18})?\\s*", message = "id must be a task id: digits only")
    private String id;

    @Pattern(
            regexp = "\\s*(\\$\\.)?([A-Za-z0-9_\\-]{1,100}(\\.[A-Za-z0-9_\\-]{1,100})*)?\\s*",
            message = "payload path must be dotted field names (letters, digits, _ and -), e.g. order.id")
    private String path;

    @Size(max = MAX_TEXT, message = "payload value must be at most " + MAX_TEXT + " characters")
    private String value;

    /** @return whether {@code from} is blank or a time {@link TaskSearch} reads */
    @AssertTrue(message = "from must be a time like 2026-01-02T03:04 (UTC)")
    public boolean isFromATime() {
        return TaskSearch.isTime(from);
    }

    /** @return whether {@code to} is blank or a time {@link TaskSearch} reads */
    @AssertTrue(message = "to must be a time like 2026-01-02T03:04 (UTC)")
    public boolean isToATime() {
        return TaskSearch.isTime(to);
    }

    /** @return whether a payload path, if given, comes with a value */
    @AssertTrue(message = "payload value is required with a payload path")
    public boolean isValueGivenWithPath() {
        return path == null || path.isBlank() || value != null;
    }

    /**
     * @return the filter
     * @throws IllegalArgumentException naming the field, for a value the checks above let through
     *     but the filter cannot take
     */
    public TaskSearch toSearch() {
        return TaskSearch.of(state, queue, kind, key, reference, from, to, id, path, value);
    }

    /** @return the state, as sent, or {@code null} */
    public String getState() {
        return state;
    }

    /** @param state a task state, any case, or blank */
    public void setState(String state) {
        this.state = state;
    }

    /** @return the queue, as sent, or {@code null} */
    public String getQueue() {
        return queue;
    }

    /** @param queue an exact queue name, or blank */
    public void setQueue(String queue) {
        this.queue = queue;
    }

    /** @return the kind, as sent, or {@code null} */
    public String getKind() {
        return kind;
    }

    /** @param kind an exact kind, or blank */
    public void setKind(String kind) {
        this.kind = kind;
    }

    /** @return the idempotency key, as sent, or {@code null} */
    public String getKey() {
        return key;
    }

    /** @param key an exact idempotency key, or blank */
    public void setKey(String key) {
        this.key = key;
    }

    /** @return the reference, as sent, or {@code null} */
    public String getReference() {
        return reference;
    }

    /** @param reference an exact business reference, or blank */
    public void setReference(String reference) {
        this.reference = reference;
    }

    /** @return the lower creation time, as sent, or {@code null} */
    public String getFrom() {
        return from;
    }

    /** @param from created at or after, such as {@code 2026-01-02T03:04} (UTC), or blank */
    public void setFrom(String from) {
        this.from = from;
    }

    /** @return the upper creation time, as sent, or {@code null} */
    public String getTo() {
        return to;
    }

    /** @param to created before, such as {@code 2026-01-02T03:04} (UTC), or blank */
    public void setTo(String to) {
        this.to = to;
    }

    /** @return the task id, as sent, or {@code null} */
    public String getId() {
        return id;
    }

    /** @param id a task id (digits), or blank */
    public void setId(String id) {
        this.id = id;
    }

    /** @return the payload path, as sent, or {@code null} */
    public String getPath() {
        return path;
    }

    /** @param path a dotted payload path such as {@code order.id}, or blank */
    public void setPath(String path) {
        this.path = path;
    }

    /** @return the payload value, as sent, or {@code null} */
    public String getValue() {
        return value;
    }

    /** @param value the text the payload path must equal */
    public void setValue(String value) {
        this.value = value;
    }
}
