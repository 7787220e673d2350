package io.dbtasks.internal.execution;

import io.dbtasks.InvalidPayloadException;
import io.dbtasks.TaskHandler;
import io.dbtasks.TransactionalTaskHandler;
import io.dbtasks.UnknownKindException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * The handlers of one engine by kind, and the reading of payloads into their types. Payloads are
 * read only as the class the handler was registered with; nothing in a payload names a class.
 */
public final class HandlerRegistry {
    /** A handler and its payload type. */
    /** A handler and its payload type; exactly one of {@code handler} and {@code transactional} is set. */
    public record Registration<P>(
            String kind, Class<P> payloadType, TaskHandler<P> handler, TransactionalTaskHandler<P> transactional) {}

    private final Map<String, Registration<?>> byKind;
    private final JsonMapper mapper;

    private HandlerRegistry(Map<String, Registration<?>> byKind, JsonMapper mapper) {
        this.byKind = Map.copyOf(byKind);
        this.mapper = mapper;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Set<String> kinds() {
        return byKind.keySet();
    }

    /** @return the registration for {@code kind}, or {@code null} */
    public Registration<?> find(String kind) {
        return byKind.get(kind);
    }

    /** Writes a payload as JSON text; {@code null} stays {@code null}. */
    public String write(Object payload) {
        if (payload == null) {
            return null;
        }
        String json;
        try {
            json = mapper.writeValueAsString(payload);
        } catch (JacksonException e) {
            throw new InvalidPayloadException(
                    "Payload of type " + payload.getClass().getName() + " cannot be written as JSON: "
                            + e.getOriginalMessage() + "; give it public getters or Jackson annotations",
                    e);
        }
        String problem = io.dbtasks.StoredText.problem(json);
        if (problem != null) {
            // Jackson escapes NUL but copies a lone surrogate, which no database stores faithfully.
            throw new InvalidPayloadException("The payload written as JSON " + problem, null);
        }
        return json;
    }

    /**
     * Reads {@code json} as {@code type}. A {@code Void} type gives {@code null} whatever the JSON;
     * any other type requires a non-null payload.
     *
     * @throws InvalidPayloadException if the JSON is missing, {@code null}, or does not read as {@code type}
     */
    public <P> P read(String kind, String json, Class<P> type) {
        if (type == Void.class) {
            return null;
        }
        try {
            P payload = json == null ? null : mapper.readValue(json, type);
            if (payload == null) {
                throw new InvalidPayloadException(
                        "Task kind '" + kind + "' needs a payload of type " + type.getName()
                                + " but the task has none; enqueue it with a payload",
                        null);
            }
            return payload;
        } catch (JacksonException e) {
            throw new InvalidPayloadException(
                    "Payload of kind '" + kind + "' cannot be read as " + type.getName() + ": " + e.getOriginalMessage()
                            + "; fix the payload and retry the task",
                    e);
        }
    }

    /** Checks that {@code kind} has a handler and {@code json} reads as its payload type. */
    public void validate(String kind, String json) {
        Registration<?> r = byKind.get(kind);
        if (r == null) {
            throw unknownKind(kind);
        }
        read(kind, json, r.payloadType());
    }

    public UnknownKindException unknownKind(String kind) {
        return new UnknownKindException("No handler is registered for task kind '" + kind + "'; known kinds are "
                + byKind.keySet() + ". Register one with DbTasks.builder(...).handler(\"" + kind
                + "\", PayloadType.class, handler), then retry the task");
    }

    /** Collects registrations. Not thread-safe. */
    public static final class Builder {
        private final Map<String, Registration<?>> byKind = new LinkedHashMap<>();

        public <P> void register(String kind, Class<P> payloadType, TaskHandler<P> handler) {
            add(new Registration<>(kind, payloadType, Objects.requireNonNull(handler, "handler"), null));
        }

        public <P> void registerTransactional(String kind, Class<P> payloadType, TransactionalTaskHandler<P> handler) {
            add(new Registration<>(kind, payloadType, null, Objects.requireNonNull(handler, "handler")));
        }

        private void add(Registration<?> r) {
            String kind = Objects.requireNonNull(r.kind(), "kind");
            Objects.requireNonNull(r.payloadType(), "payloadType");
            if (kind.isBlank()) {
                throw new IllegalArgumentException("kind must not be blank");
            }
            if (byKind.putIfAbsent(kind, r) != null) {
                throw new IllegalArgumentException(
                        "Task kind '" + kind + "' already has a handler; each kind takes one");
            }
        }

        /** @return a builder holding the same registrations, to add more without changing this one */
        public Builder copy() {
            Builder b = new Builder();
            b.byKind.putAll(byKind);
            return b;
        }

        public HandlerRegistry build(JsonMapper mapper) {
            return new HandlerRegistry(byKind, mapper);
        }
    }
}
