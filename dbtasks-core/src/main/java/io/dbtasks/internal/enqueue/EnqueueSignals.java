package io.dbtasks.internal.enqueue;

import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Throttles the cross-instance wake-up that enqueues send ({@code NOTIFY} on PostgreSQL) to at most
 * one per queue per {@code interval} from this engine, without ever leaving a committed task
 * unannounced for longer than that.
 *
 * <p>Why: a PostgreSQL transaction that sent a {@code NOTIFY} holds a database-wide lock from
 * before its commit until it ends, so notifying enqueues commit one at a time and lose group
 * commit; it also costs a round trip. Most of those signals are redundant under load: a worker
 * woken by one claims every due task it finds.
 *
 * <p>How: an enqueue asks {@link #claim} which of its queues it must notify inside its own
 * transaction: a queue not signalled within the interval (an idle queue is signalled at once, so
 * idle latency is unchanged). For every other queue, once the enqueue has committed, {@link
 * #committed} makes sure one trailing signal follows, sent by a timer at most one interval after the
 * last one, on a connection of its own. Since that signal is sent after the commit it announces, a
 * worker it wakes sees the task; many commits in one interval share it. The trailing signal is what
 * guarantees delivery; the in-transaction one only makes the idle case fast, so a claim whose
 * transaction rolled back or inserted only duplicates loses nothing. A trailing signal that fails
 * (database unreachable) is logged; other instances still find the task at their next poll.
 *
 * <p>The limit is kept per queue; the trailing signal makes sure that no committed task waits for
 * a poll.
 *
 * <p>Thread-safety: thread-safe; {@link #claim} and {@link #committed} are lock-free.
 */
public final class EnqueueSignals {
    private static final Logger log = LoggerFactory.getLogger(EnqueueSignals.class);

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final long intervalNanos;
    private final ConcurrentHashMap<String, QueueSignal> queues = new ConcurrentHashMap<>();
    private volatile ScheduledExecutorService timer;
    private volatile boolean closed;

    /** When a queue was last signalled, and whether a trailing signal is scheduled for it. */
    private static final class QueueSignal {
        final AtomicLong lastSent;
        final AtomicBoolean trailing = new AtomicBoolean();

        QueueSignal(long never) {
            this.lastSent = new AtomicLong(never);
        }
    }

    /**
     * @param jdbc the engine's connections, for trailing signals
     * @param dialect the database's dialect; where it sends no signal, this does nothing
     * @param interval the least time between two signals of one queue; {@link Duration#ZERO} sends
     *     one in every enqueuing transaction, as without throttling
     */
    public EnqueueSignals(Jdbc jdbc, Dialect dialect, Duration interval) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.intervalNanos = interval.toNanos();
    }

    /** @return signals without throttling: every enqueuing transaction signals its queues */
    static EnqueueSignals unthrottled(Jdbc jdbc, Dialect dialect) {
        return new EnqueueSignals(jdbc, dialect, Duration.ZERO);
    }

    /**
     * Picks the queues an enqueue signals inside its transaction, and counts them as signalled now.
     *
     * @param queues the queues the enqueue writes to
     * @return those to signal in the transaction (a subset, possibly empty; always empty where the
     *     database has no signals; all of them once {@link #close} has begun, since no timer is left
     *     to send a trailing signal); the caller passes the others to {@link #committed} after its
     *     commit
     */
    Set<String> claim(Set<String> queues) {
        if (!dialect.signalsEnqueues()) {
            return Set.of(); // nothing to send: other instances poll
        }
        if (intervalNanos == 0 || closed) {
            return queues;
        }
        Set<String> inline = new LinkedHashSet<>();
        long now = System.nanoTime();
        for (String queue : queues) {
            QueueSignal s = signal(queue, now);
            long last = s.lastSent.get();
            if (now - last >= intervalNanos && s.lastSent.compareAndSet(last, now)) {
                inline.add(queue);
            }
        }
        return inline;
    }

    /**
     * After an enqueue committed: makes sure a signal for each of {@code queues} follows, at most one
     * interval after the queue's last; once {@link #close} has begun, at once on the calling thread.
     *
     * @param queues the queues the enqueue wrote to and did not signal in its transaction
     */
    void committed(Set<String> queues) {
        if (queues.isEmpty() || intervalNanos == 0 || !dialect.signalsEnqueues()) {
            return;
        }
        if (closed) {
            send(queues); // an enqueue that claimed before close began: no timer is left to send it
            return;
        }
        long now = System.nanoTime();
        for (String queue : queues) {
            QueueSignal s = signal(queue, now);
            if (s.trailing.compareAndSet(false, true)) {
                long delay = Math.max(0, s.lastSent.get() + intervalNanos - now);
                try {
                    timer().schedule(() -> sendTrailing(queue, s), delay, TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException e) {
                    // close began meanwhile; unless its own sweep took this signal, send it here
                    if (s.trailing.compareAndSet(true, false)) {
                        send(Set.of(queue));
                    }
                }
            }
        }
    }

    /** The timer's trailing signal; skipped if {@link #close} took it first. */
    private void sendTrailing(String queue, QueueSignal s) {
        // Cleared before sending: a commit after this point schedules a signal of its own, and one
        // before it is announced by this one, which follows it.
        if (!s.trailing.compareAndSet(true, false)) {
            return;
        }
        s.lastSent.set(System.nanoTime());
        send(Set.of(queue));
    }

    /** Signals {@code queues} on one connection of its own; a failure is logged, not thrown. */
    private void send(Set<String> queues) {
        try {
            jdbc.withConnection("Signal new tasks of queue(s) " + queues, c -> {
                dialect.notifyEnqueued(c, queues);
                return null;
            });
        } catch (RuntimeException e) {
            log.debug(
                    "Signalling new tasks of queue(s) {} failed; other instances find them at their next poll",
                    queues,
                    e);
        }
    }

    private QueueSignal signal(String queue, long now) {
        QueueSignal s = queues.get(queue);
        return s != null ? s : queues.computeIfAbsent(queue, q -> new QueueSignal(now - intervalNanos));
    }

    private ScheduledExecutorService timer() {
        ScheduledExecutorService t = timer;
        if (t == null) {
            synchronized (this) {
                t = timer;
                if (t == null) {
                    if (closed) {
                        throw new RejectedExecutionException("closed");
                    }
                    ScheduledThreadPoolExecutor created = new ScheduledThreadPoolExecutor(1, r -> {
                        Thread thread = new Thread(r, "dbtasks-enqueue-signal");
                        thread.setDaemon(true);
                        return thread;
                    });
                    // On shutdown, delayed signals are dropped (close sends them itself); one being
                    // sent is left to finish, not interrupted halfway through its statement.
                    created.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
                    t = created;
                    timer = t;
                }
            }
        }
        return t;
    }

    /**
     * Stops the timer and sends every trailing signal still owed at once, all in one statement on the
     * calling thread, instead of at its due time: a closing engine may be gone (its pool closed, its
     * JVM ended) by then, and the tasks they announce are committed already. A signal the timer is
     * sending at that moment is waited for, up to {@code timeoutMillis}; none is sent twice (the timer
     * and this method each take a queue's owed signal with a compare-and-set). Enqueues from now on
     * signal in their own transaction, or, if they began before, right after their commit.
     *
     * @param timeoutMillis how long to wait for a signal the timer is sending, in milliseconds
     */
    public void close(long timeoutMillis) {
        ScheduledExecutorService t;
        synchronized (this) {
            closed = true;
            t = timer;
        }
        if (t == null) {
            return;
        }
        t.shutdown(); // drops the signals not yet due (they are sent below); lets a running one finish
        try {
            t.awaitTermination(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Set<String> owed = new LinkedHashSet<>();
        queues.forEach((queue, s) -> {
            if (s.trailing.compareAndSet(true, false)) {
                owed.add(queue);
            }
        });
        if (!owed.isEmpty()) {
            send(owed);
        }
    }
}
