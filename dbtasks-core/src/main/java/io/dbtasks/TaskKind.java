package io.dbtasks;

import java.util.Objects;

/**
 * A task kind with its payload type: the stable name stored with each task and the class its JSON
 * payload is read as. Declare one constant per kind and use it where the handler is registered
 * ({@link DbTasks.Builder#handler(TaskKind, TaskHandler)}) and where tasks are requested ({@link
 * TaskRequest#of(TaskKind, Object)}), so that the compiler checks that both agree on the payload.
 *
 * <pre>{@code
 * static final TaskKind<SyncOrder> SYNC_ORDER = TaskKind.of("order.sync", SyncOrder.class);
 * }</pre>
 *
 * @param name the stable kind name, 1 to {@value TaskRequest#MAX_NAME_LENGTH} characters, not blank
 * @param payloadType the payload class; {@code Void.class} for a kind without payload
 * @param <P> the payload type
 */
public record TaskKind<P>(String name, Class<P> payloadType) {
    /**
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if {@code name} is blank or too long
     */
    public TaskKind {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(payloadType, "payloadType");
        if (name.isBlank() || name.length() > TaskRequest.MAX_NAME_LENGTH) {
            throw new IllegalArgumentException(
                    "kind name must be 1 to " + TaskRequest.MAX_NAME_LENGTH + " characters, not blank: '" + name + "'");
        }
    }

    /**
     * @param name the stable kind name
     * @param payloadType the payload class; {@code Void.class} for none
     * @param <P> the payload type
     * @return the kind
     * @throws IllegalArgumentException if {@code name} is blank or too long
     */
    public static <P> TaskKind<P> of(String name, Class<P> payloadType) {
        return new TaskKind<>(name, payloadType);
    }
}
