/**
 * Events: what the engine did to tasks and workers, for metrics, alerts, dashboards and tests.
 *
 * <p>Register a {@link io.dbtasks.event.TaskEventListener} with {@code
 * DbTasks.builder(...).listener(...)}. Delivery is asynchronous and off the engine's hot path: each
 * listener has its own bounded queue and its own delivery thread, so a slow or throwing listener
 * delays or loses only its own events, never claims, task outcomes or another listener's events. An
 * event that finds its listener's queue full is dropped and counted ({@code
 * DbTasks#droppedEvents()}).
 *
 * <p>Ordering: one listener receives the events of one task in the order of its transitions
 * (claimed, started, then how the attempt ended, then the next claim), because each event is
 * published after the transition it reports and before the next one can happen. Two exceptions
 * follow from several parties acting on one task: {@link
 * io.dbtasks.event.TaskEvent.Type#ENQUEUED} is published by the enqueuing thread after its commit,
 * so a worker that claims the task at once may publish {@code CLAIMED} first; and {@link
 * io.dbtasks.event.TaskEvent.Type#LEASE_LOST} is published when the old holder notices, which may be
 * after the new holder's {@code CLAIMED}. Events of different tasks, and events published by
 * different engines, have no order between them. Each engine publishes only what it did (or, for
 * {@code LEASE_LOST}, what it noticed).
 */
package io.dbtasks.event;
