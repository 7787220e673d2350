package io.dbtasks.server.dashboard;

import io.dbtasks.TaskQuery;
import io.dbtasks.TaskStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * A dashboard task filter, as read from the query string: every field optional, all given fields
 * must match. Built by {@link #of}, which rejects malformed values with a message naming the field.
 *
 * @param status the task's state, or {@code null}
 * @param queue exact queue name, or {@code null}
 * @param kind exact kind, or {@code null}
 * @param key exact idempotency key, or {@code null}
 * @param reference exact business reference, or {@code null}
 * @param createdFrom created at or after, or {@code null}
 * @param createdTo created before, or {@code null}
 * @param id exact task id, or {@code null}
 * @param payloadPath a dotted JSON path into the payload ({@code order.id}), or {@code null}
 * @param payloadValue the text the payload path must equal; required with a path
 */
public record TaskSearch(
        TaskStatus status,
        String queue,
        String kind,
        String key,
        String reference,
        Instant createdFrom,
        Instant createdTo,
        Long id,
        List<String> payloadPath,
        String payloadValue) {

    /** A segment of a payload path: letters, digits, '_' and '-'. */
    static final Pattern SEGMENT = TaskQuery.PATH_SEGMENT;

    /** Matches every task. */
    public static final TaskSearch ALL = new TaskSearch(null, null, null, null, null, null, null, null, null, null);

    /**
     * Reads a filter from request parameters; blanks mean "not given".
     *
     * @throws IllegalArgumentException naming the field, for a malformed value
     */
    static TaskSearch of(
            String status,
            String queue,
            String kind,
            String key,
            String reference,
            String from,
            String to,
            String id,
            String payloadPath,
            String payloadValue) {
        TaskStatus s = null;
        if (notBlank(status)) {
            try {
                s = TaskStatus.valueOf(status.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("state must be one of " + List.of(TaskStatus.values()));
            }
        }
        Long taskId = null;
        if (notBlank(id)) {
            String t = id.trim();
            if (!t.matches("[0-9]{1,18}")) {
                throw new IllegalArgumentException("id must be a task id: digits only");
            }
            taskId = Long.parseLong(t);
        }
        List<String> path = null;
        if (notBlank(payloadPath)) {
            path = new ArrayList<>();
            String p = payloadPath.trim();
            if (p.startsWith("$.")) {
                p = p.substring(2);
            }
            for (String seg : p.split("\\.", -1)) {
                if (!SEGMENT.matcher(seg).matches()) {
                    throw new IllegalArgumentException(
                            "payload path must be dotted field names (letters, digits, _ and -), e.g. order.id");
                }
                path.add(seg);
            }
            if (payloadValue == null) {
                throw new IllegalArgumentException("payload value is required with a payload path");
            }
        }
        return new TaskSearch(
                s,
                blankToNull(queue),
                blankToNull(kind),
                blankToNull(key),
                blankToNull(reference),
                time(from, "from"),
                time(to, "to"),
                taskId,
                path == null ? null : List.copyOf(path),
                path == null ? null : payloadValue);
    }

    /** @return whether {@code v} is blank or a time {@link #of} reads */
    static boolean isTime(String v) {
        try {
            time(v, "time");
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static Instant time(String v, String field) {
        try {
            return parseTime(v);
        } catch (java.time.DateTimeException e) {
            throw new IllegalArgumentException(field + " must be a time like 2026-01-02T03:04 (UTC)");
        }
    }

    /**
     * Reads a time as the dashboard's and the API's filters take it: ISO-8601 to the minute or finer,
     * with a zone offset or {@code Z}, or without one (then UTC, as a {@code datetime-local} input
     * sends it).
     *
     * @param v the text, or {@code null} or blank for "not given"
     * @return the instant, or {@code null} when not given
     * @throws java.time.DateTimeException if the text is not such a time
     */
    public static Instant parseTime(String v) {
        if (!notBlank(v)) {
            return null;
        }
        String t = v.trim();
        if (t.length() == 16) { // datetime-local input: 2026-01-02T03:04
            t = t + ":00Z";
        } else if (!t.endsWith("Z") && !t.matches(".*[+-][0-9]{2}:[0-9]{2}")) {
            t = t + "Z";
        }
        return java.time.OffsetDateTime.parse(t).toInstant();
    }

    private static boolean notBlank(String s) {
        return s != null && !s.isBlank();
    }

    private static String blankToNull(String s) {
        return notBlank(s) ? s.trim() : null;
    }

    /** @return the filter as the core's query, first page, no time limit */
    public TaskQuery toQuery() {
        return TaskQuery.builder()
                .status(status)
                .queue(queue)
                .kind(kind)
                .key(key)
                .reference(reference)
                .created(createdFrom, createdTo)
                .id(id)
                .payload(payloadPath, payloadValue)
                .build();
    }

    /** @return whether no field is set */
    public boolean isEmpty() {
        return equals(ALL);
    }

    /** @return the payload path as written, dotted, or empty */
    public String payloadPathText() {
        return payloadPath == null ? "" : String.join(".", payloadPath);
    }

    /** @return the filter as a query string (without '?'), for links */
    public String query() {
        UriComponentsBuilder b = UriComponentsBuilder.newInstance();
        add(b, "state", status == null ? null : status.name());
        add(b, "queue", queue);
        add(b, "kind", kind);
        add(b, "key", key);
        add(b, "reference", reference);
        add(b, "from", createdFrom == null ? null : createdFrom.toString());
        add(b, "to", createdTo == null ? null : createdTo.toString());
        add(b, "id", id == null ? null : id.toString());
        add(b, "path", payloadPathText().isEmpty() ? null : payloadPathText());
        add(b, "value", payloadPath == null ? null : payloadValue);
        String q = b.encode().build().getQuery();
        return q == null ? "" : q;
    }

    private static void add(UriComponentsBuilder b, String name, String value) {
        if (value != null) {
            b.queryParam(name, value);
        }
    }
}
