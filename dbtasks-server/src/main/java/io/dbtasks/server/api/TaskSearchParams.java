package io.dbtasks.server.api;

import io.dbtasks.server.dashboard.TaskSearch;
import io.swagger.v3.oas.annotations.Parameter;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * The search parameters of {@code GET /api/tasks} beyond state, queue and kind: the dashboard's
 * filters and its keyset paging. Every field optional, blank meaning "not given"; any of them makes
 * the listing a keyset search ({@link #isKeyset()}). Bean Validation checks each field's form (a bad
 * one is answered 400 naming the field). Mutable, for binding only; not thread-safe.
 */
public class TaskSearchParams {
    private static final String TIME = "\\s*([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}"
            + "(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?\\s*";
    private static final String TIME_MESSAGE = " must be a time like 2026-01-02T03:04:05Z (without a zone: UTC)";

    @Parameter(description = "Only the task with this idempotency key")
    @Size(max = 1000, message = "'key' must be at most 1000 characters")
    private String key;

    @Parameter(description = "Only tasks with this business reference")
    @Size(max = 1000, message = "'reference' must be at most 1000 characters")
    private String reference;

    @Parameter(description = "Only tasks created at or after this time (ISO-8601; without a zone: UTC)")
    @Pattern(regexp = TIME, message = "'createdFrom'" + TIME_MESSAGE)
    private String createdFrom;

    @Parameter(description = "Only tasks created before this time (ISO-8601; without a zone: UTC)")
    @Pattern(regexp = TIME, message = "'createdTo'" + TIME_MESSAGE)
    private String createdTo;

    @Parameter(description = "Only the task with this id")
    @Pattern(regexp = "\\s*([0-9]{1,18})?\\s*", message = "'id' must be a task id: digits only")
    private String id;

    @Parameter(
            description = "A dotted path into the JSON payload (order.id; digits index arrays); needs payloadValue."
                    + " Operators only where payloads are hidden from viewers")
    @Pattern(
            regexp = "\\s*(\\$\\.)?([A-Za-z0-9_\\-]{1,100}(\\.[A-Za-z0-9_\\-]{1,100})*)?\\s*",
            message = "'payloadPath' must be dotted field names (letters, digits, _ and -), e.g. order.id")
    private String payloadPath;

    @Parameter(description = "The text the value at payloadPath must equal (a string, number or boolean as written)")
    @Size(max = 1000, message = "'payloadValue' must be at most 1000 characters")
    private String payloadValue;

    @Parameter(
            description = "Keyset cursor: the 'next' of the previous page; only tasks with a lower id."
                    + " Makes the listing a keyset search")
    @Pattern(regexp = "\\s*([0-9]{1,18})?\\s*", message = "'before' must be the 'next' of a page: digits only")
    private String before;

    @Parameter(
            description = "offset (default: page and total) or keyset (before and next, no total); any of the"
                    + " search parameters above implies keyset")
    @Pattern(regexp = "\\s*(offset|keyset)?\\s*", message = "'paging' must be 'offset' or 'keyset'")
    private String paging;

    /** @return whether a payload path, if given, comes with a value, and a value with a path */
    @AssertTrue(message = "'payloadPath' and 'payloadValue' go together: give both or neither")
    public boolean isPayloadFilterWhole() {
        return blank(payloadPath) ? payloadValue == null || payloadValue.isEmpty() : payloadValue != null;
    }

    /** @return whether offset paging was asked for together with a search parameter */
    @AssertTrue(message = "'paging=offset' cannot be combined with search parameters; page them with 'before'")
    public boolean isPagingConsistent() {
        return !"offset".equals(trim(paging)) || !anySearch();
    }

    /** @return whether the listing is a keyset search */
    public boolean isKeyset() {
        return "keyset".equals(trim(paging)) || anySearch();
    }

    private boolean anySearch() {
        return !blank(key)
                || !blank(reference)
                || !blank(createdFrom)
                || !blank(createdTo)
                || !blank(id)
                || !blank(payloadPath)
                || !blank(before);
    }

    /** @return the key, trimmed, or {@code null} */
    public String key() {
        return trim(key);
    }

    /** @return the reference, trimmed, or {@code null} */
    public String reference() {
        return trim(reference);
    }

    /** @return the lower creation time, or {@code null} */
    public Instant createdFromTime() {
        return time(createdFrom, "createdFrom");
    }

    /** @return the upper creation time, or {@code null} */
    public Instant createdToTime() {
        return time(createdTo, "createdTo");
    }

    /** @return the task id, or {@code null} */
    public Long idValue() {
        return blank(id) ? null : Long.parseLong(id.trim());
    }

    /** @return the cursor, or {@code null} */
    public Long beforeValue() {
        return blank(before) ? null : Long.parseLong(before.trim());
    }

    /** @return the payload path's segments, or {@code null} */
    public List<String> payloadPathSegments() {
        if (blank(payloadPath)) {
            return null;
        }
        String p = payloadPath.trim();
        return Arrays.asList((p.startsWith("$.") ? p.substring(2) : p).split("\\.", -1));
    }

    /** @return the payload value, as sent, or {@code null} */
    public String payloadValueText() {
        return payloadValue;
    }

    private static Instant time(String v, String field) {
        try {
            return TaskSearch.parseTime(v);
        } catch (java.time.DateTimeException e) {
            throw new BadRequestException("'" + field + "'" + TIME_MESSAGE);
        }
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    private static String trim(String s) {
        return blank(s) ? null : s.trim();
    }

    /** @return the key as sent */
    public String getKey() {
        return key;
    }

    /** @param key an exact idempotency key, or blank */
    public void setKey(String key) {
        this.key = key;
    }

    /** @return the reference as sent */
    public String getReference() {
        return reference;
    }

    /** @param reference an exact business reference, or blank */
    public void setReference(String reference) {
        this.reference = reference;
    }

    /** @return the lower creation time as sent */
    public String getCreatedFrom() {
        return createdFrom;
    }

    /** @param createdFrom created at or after (ISO-8601), or blank */
    public void setCreatedFrom(String createdFrom) {
        this.createdFrom = createdFrom;
    }

    /** @return the upper creation time as sent */
    public String getCreatedTo() {
        return createdTo;
    }

    /** @param createdTo created before (ISO-8601), or blank */
    public void setCreatedTo(String createdTo) {
        this.createdTo = createdTo;
    }

    /** @return the id as sent */
    public String getId() {
        return id;
    }

    /** @param id a task id (digits), or blank */
    public void setId(String id) {
        this.id = id;
    }

    /** @return the payload path as sent */
    public String getPayloadPath() {
        return payloadPath;
    }

    /** @param payloadPath a dotted payload path, or blank */
    public void setPayloadPath(String payloadPath) {
        this.payloadPath = payloadPath;
    }

    /** @return the payload value as sent */
    public String getPayloadValue() {
        return payloadValue;
    }

    /** @param payloadValue the text the payload path must equal */
    public void setPayloadValue(String payloadValue) {
        this.payloadValue = payloadValue;
    }

    /** @return the cursor as sent */
    public String getBefore() {
        return before;
    }

    /** @param before the previous page's {@code next}, or blank */
    public void setBefore(String before) {
        this.before = before;
    }

    /** @return the paging mode as sent */
    public String getPaging() {
        return paging;
    }

    /** @param paging {@code offset}, {@code keyset} or blank */
    public void setPaging(String paging) {
        this.paging = paging;
    }
}
