package io.dbtasks.event;

/**
 * Receives the engine's events; see the {@linkplain io.dbtasks.event package documentation} for
 * delivery and ordering.
 *
 * <p>Each listener is called on its own delivery thread, one event at a time, so an implementation
 * need not be thread-safe against itself; it should be quick, since events queue behind a slow call
 * and are dropped (and counted) once its queue is full. Whatever it throws is logged and the next
 * event is delivered; it never affects tasks.
 */
@FunctionalInterface
public interface TaskEventListener {
    /**
     * Called once per task event.
     *
     * @param event the event, never {@code null}
     */
    void onTaskEvent(TaskEvent event);

    /**
     * Called when this engine's workers start or stop. Does nothing unless overridden.
     *
     * @param event the event, never {@code null}
     */
    default void onWorkerEvent(WorkerEvent event) {}
}
