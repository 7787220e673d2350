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
 * <p>Ordering: a listener receives the events one engine publishes about one task in the order of
 * the task's transitions: enqueued, claimed, started, then how the attempt ended (succeeded,
 * failed, retry scheduled, cancelled, handed back, or rescued by this engine after its lease
 * expired), then the next claim. Each event is published after its transition commits; where
 * another thread of the engine could act on the committed row at once (claim a task just sent back
 * to PENDING), the writer holds that task's later events back until its own is out, so the claim
 * is never delivered first. Two exceptions: {@link io.dbtasks.event.TaskEvent.Type#LEASE_LOST} is
 * published when the old holder notices, which may be after the task's next {@code CLAIMED}; and
 * {@link io.dbtasks.event.TaskEvent.Type#LONG_RUNNING} comes from a timer, between {@code STARTED}
 * and the attempt's end. Each engine publishes only what it did (or noticed) to its own listeners:
 * a task enqueued by one engine and run by another is {@code ENQUEUED} on the first and {@code
 * CLAIMED} on the second, with no order between them. Events of different tasks have no order.
 */
@NullMarked
package io.dbtasks.event;

import org.jspecify.annotations.NullMarked;
