package io.dbtasks.internal.support;

import io.dbtasks.Task;
import io.dbtasks.event.TaskEvent;
import io.dbtasks.event.TaskEventListener;
import io.dbtasks.event.WorkerEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes events to the registered listeners, off the caller's thread.
 *
 * <p>Each listener has a bounded queue of {@value #QUEUE_CAPACITY} events and one daemon thread that
 * delivers them in order. Publishing never blocks: an event that finds a queue full is dropped for
 * that listener and counted. So a slow listener delays and loses only its own events, and a
 * throwing one is logged and goes on receiving. With no listeners, publishing costs one branch.
 *
 * <p>Order per task: an event is published after the transition it reports commits, so another
 * thread of this engine could act on the committed row (claim a task just sent back to PENDING)
 * and publish first. A writer whose transition may be followed by a claim therefore {@link #hold
 * holds} the task's events before it commits and {@link #release releases} them with its own event
 * after: whatever others publish for that task in between is deferred until then, never blocked.
 *
 * <p>Thread-safety: every method may be called from any thread; events one thread publishes reach
 * each listener in the order published.
 */
public final class Events {
    private static final Logger log = LoggerFactory.getLogger(Events.class);
    /** Events one listener may have waiting before further ones are dropped. */
    static final int QUEUE_CAPACITY = 16_384;

    private final String workerId;
    private final List<Delivery> deliveries;
    /** Tasks whose events are held back, with the events deferred meanwhile. */
    private final ConcurrentHashMap<Long, Held> held = new ConcurrentHashMap<>();

    /** Holds of one task (a stale and a current execution may both hold) and what waits for them. */
    private static final class Held {
        int holds;
        final List<TaskEvent> deferred = new ArrayList<>();
    }

    public Events(String workerId, List<TaskEventListener> listeners) {
        this.workerId = workerId;
        List<Delivery> list = new ArrayList<>(listeners.size());
        int n = 0;
        for (TaskEventListener l : listeners) {
            list.add(new Delivery(l, "dbtasks-events-" + (++n)));
        }
        this.deliveries = List.copyOf(list);
    }

    /** @return whether any listener is registered; callers may skip building events otherwise */
    public boolean enabled() {
        return !deliveries.isEmpty();
    }

    public void start() {
        deliveries.forEach(Delivery::start);
    }

    /** Publishes an event about {@code t}'s current attempt (its claim's token and attempt number). */
    public void task(TaskEvent.Type type, Task t, String detail) {
        if (enabled()) {
            publish(event(type, t, detail));
        }
    }

    /** @return an event about {@code t}'s current attempt, or {@code null} with no listeners */
    public TaskEvent event(TaskEvent.Type type, Task t, String detail) {
        return enabled()
                ? new TaskEvent(
                        type,
                        t.id(),
                        t.kind(),
                        t.queue(),
                        t.attempt(),
                        t.fencingToken(),
                        workerId,
                        Instant.now(),
                        null,
                        detail,
                        t.runAt(),
                        t.traceParent())
                : null;
    }

    /**
     * @return an event about attempt {@code attempt} (under {@code token}; {@code null} before any
     *     claim) of task {@code id}, or
     *     {@code null} with no listeners
     */
    public TaskEvent event(
            TaskEvent.Type type, long id, String kind, String queue, int attempt, Long token, String detail) {
        return enabled() ? build(type, id, kind, queue, attempt, token, Instant.now(), null, detail) : null;
    }

    /** @return {@link TaskEvent.Type#RETRY_SCHEDULED}, due {@code delay} from now; {@code null} with no listeners */
    public TaskEvent retryScheduled(Task t, Duration delay, String detail) {
        if (!enabled()) {
            return null;
        }
        Instant now = Instant.now();
        return new TaskEvent(
                TaskEvent.Type.RETRY_SCHEDULED,
                t.id(),
                t.kind(),
                t.queue(),
                t.attempt(),
                t.fencingToken(),
                workerId,
                now,
                now.plus(delay),
                detail,
                t.runAt(),
                t.traceParent());
    }

    private TaskEvent build(
            TaskEvent.Type type,
            long id,
            String kind,
            String queue,
            int attempt,
            Long token,
            Instant at,
            Instant nextRunAt,
            String detail) {
        return new TaskEvent(type, id, kind, queue, attempt, token, workerId, at, nextRunAt, detail);
    }

    /**
     * Defers task {@code id}'s events published by others until the matching {@link #release}.
     * Call before committing a transition that a claim may follow; always release, in a {@code
     * finally}.
     */
    public void hold(long id) {
        if (enabled()) {
            held.compute(id, (k, h) -> {
                Held x = h != null ? h : new Held();
                x.holds++;
                return x;
            });
        }
    }

    /**
     * Publishes {@code own} (if not {@code null}), then, once no one else holds the task, the
     * events deferred by {@link #hold}.
     */
    public void release(long id, TaskEvent own) {
        if (!enabled()) {
            return;
        }
        held.compute(id, (k, h) -> {
            if (own != null) {
                deliver(own);
            }
            if (h == null || --h.holds > 0) {
                return h;
            }
            h.deferred.forEach(this::deliver);
            return null;
        });
    }

    public void publish(TaskEvent e) {
        if (e == null) {
            return;
        }
        if (held.isEmpty()) { // the common case: nothing held, no map operation
            deliver(e);
            return;
        }
        held.compute(e.taskId(), (k, h) -> {
            if (h == null) {
                deliver(e);
            } else {
                h.deferred.add(e);
            }
            return h;
        });
    }

    /** Offers a task or worker event to every listener's queue. */
    private void deliver(Object e) {
        for (Delivery d : deliveries) {
            d.offer(e);
        }
    }

    public void publish(WorkerEvent e) {
        deliver(e);
    }

    /** @return events dropped so far because a listener's queue was full, over all listeners */
    public long dropped() {
        long n = 0;
        for (Delivery d : deliveries) {
            n += d.dropped.get();
        }
        return n;
    }

    /**
     * Delivers what is queued, waiting up to {@code timeout} in all, then stops the delivery
     * threads; events still queued after that are counted as dropped.
     */
    public void close(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Delivery d : deliveries) {
            d.close(deadline);
        }
    }

    /** One listener's queue and thread. */
    private static final class Delivery implements Runnable {
        private final TaskEventListener listener;
        private final BlockingQueue<Object> queue = new ArrayBlockingQueue<>(QUEUE_CAPACITY);
        private final AtomicLong dropped = new AtomicLong();
        private final Thread thread;
        private volatile boolean open = true;
        private long failures; // delivery thread only

        Delivery(TaskEventListener listener, String name) {
            this.listener = listener;
            this.thread = new Thread(this, name);
            this.thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        void offer(Object event) {
            if (!open || !queue.offer(event)) {
                dropped.incrementAndGet();
            }
        }

        @Override
        public void run() {
            while (open || !queue.isEmpty()) {
                Object e;
                try {
                    e = queue.poll(100, TimeUnit.MILLISECONDS);
                } catch (InterruptedException ie) {
                    break;
                }
                if (e != null) {
                    deliver(e);
                }
            }
            dropped.addAndGet(queue.size());
            queue.clear();
        }

        private void deliver(Object e) {
            try {
                if (e instanceof TaskEvent te) {
                    listener.onTaskEvent(te);
                } else {
                    listener.onWorkerEvent((WorkerEvent) e);
                }
            } catch (RuntimeException | LinkageError ex) {
                failures++;
                if (failures == 1 || failures % 1000 == 0) { // not one stack trace per event
                    log.warn(
                            "Event listener {} threw on {} ({} time(s) so far); it keeps receiving events",
                            listener,
                            e,
                            failures,
                            ex);
                }
            }
        }

        void close(long deadlineNanos) {
            open = false;
            if (!thread.isAlive()) {
                return;
            }
            try {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime())));
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            thread.interrupt(); // a listener still busy (or sleeping) past the deadline
        }
    }
}
