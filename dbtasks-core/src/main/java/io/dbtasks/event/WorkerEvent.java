package io.dbtasks.event;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * One engine's workers started or stopped. Immutable.
 *
 * @param type what happened
 * @param workerId the engine's worker id
 * @param queues the queues it works and their concurrency; empty for a producer-only engine
 * @param at when, by the engine's clock
 */
public record WorkerEvent(Type type, String workerId, Map<String, Integer> queues, Instant at) {

    /** Checks and copies the fields. */
    public WorkerEvent {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(workerId, "workerId");
        queues = Map.copyOf(queues);
        Objects.requireNonNull(at, "at");
    }

    /** What happened to the workers. */
    public enum Type {
        /** The engine started its claim loops. */
        STARTED,
        /** The engine stopped claiming and settled or handed back its tasks. */
        STOPPED
    }
}
