package io.dbtasks.internal.claim;

import io.dbtasks.internal.execution.Execution;
import io.dbtasks.internal.execution.RunningSet;
import io.dbtasks.internal.lease.Leases;
import io.dbtasks.internal.query.TaskRows;
import io.dbtasks.internal.support.EngineConfig;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claim loop of one queue on one engine, and the slots its handlers run in.
 *
 * <p>It claims only as many tasks as it has room for (never more than the claim batch), so a busy
 * engine leaves work for others. Room is the free handler slots plus a <em>claim-ahead</em> buffer:
 * while the queue's tasks are short, tasks are claimed before a slot frees and wait, leased and
 * heartbeated, until one does, so the handlers do not idle through a claim round trip. {@link
 * ClaimAhead} sizes the buffer from the handler times and shrinks it while claims leave tasks behind
 * a limit. The average handler time moves only as tasks finish, so after a switch from short to long
 * tasks some may already wait behind them: any that waits over {@value #MAX_CLAIM_AHEAD_WAIT_MILLIS}
 * ms is handed back with the rest of the buffer, and the average is raised to that wait, so long
 * tasks are not hoarded while another engine idles. {@link EngineConfig#claimAhead()} {@code false}
 * turns the buffer off.
 *
 * <p>When a claim comes back short the queue is drained and the loop sleeps for the poll interval,
 * unless a local enqueue or a notification wakes it; when it has no room it sleeps until a task
 * finishes. While the queue is busy (the last claim came back full), it does not claim for every
 * task that finishes: it waits until half its room is free, or {@value #BUSY_COOLDOWN_MILLIS} ms have
 * passed since the last claim, whichever comes first. Short tasks are then claimed in batches rather
 * than one statement per task, and a long task's freed slot idles at most that long.
 *
 * <p>Thread-safety: the claim loop runs on its own thread; {@link #released} is called from handler
 * threads and {@link #wakeUp} from any thread. Slot and buffer state is guarded by {@code this}.
 */
public final class QueueWorker implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(QueueWorker.class);
    static final long BUSY_COOLDOWN_MILLIS = 5;
    /**
     * A task claimed ahead that has waited this long for a slot is handed back (unstarted, no attempt
     * used), with every other one waiting: the queue's tasks have become slow, and another engine may
     * have a free slot.
     */
    static final long MAX_CLAIM_AHEAD_WAIT_MILLIS = 1000;

    /**
     * A failing claim is retried after at most this long (with jitter, so 250-500 ms), so a worker
     * with a backlog resumes within a second of its database returning after an outage, when no
     * NOTIFY arrives to wake it: the pause plus one connection and one claim. A failed claim costs
     * one failed connection attempt, so the cap can be low; the old cap of 30 s left workers idle up
     * to 30 s after a long outage.
     */
    static final long MAX_CLAIM_ERROR_BACKOFF_MILLIS = 500;

    /**
     * The longest a loop whose last claim was held back by a limit sleeps before it claims again, so
     * that a key's slot freed on another engine is taken within this time, not the poll interval.
     */
    static final long HELD_BACK_POLL_MILLIS = 100;

    /** Claims up to {@code limit} due tasks of {@code queue}; see {@link Leases#claim}. */
    @FunctionalInterface
    public interface Claimer {
        List<TaskRows.Claimed> claim(String queue, int limit);
    }

    private final String queue;
    private final int slots;
    private final EngineConfig config;
    private final Claimer claimer;
    private final Executor executor;
    private final RunningSet running;
    private final Execution.Wiring wiring;
    private final java.util.function.ToLongFunction<String> heldBack;
    /** The last claim left due tasks behind a limit: a task finishing here may let one start. */
    private volatile boolean wakeOnRelease;

    private final Semaphore wake = new Semaphore(0);
    private volatile boolean claiming = true;
    private Thread thread;

    // guarded by this
    private int active; // executions handed to the executor and not yet finished
    private final ArrayDeque<Execution> waiting = new ArrayDeque<>(); // claimed ahead, not yet started
    private final ClaimAhead ahead;

    /** When the loop last went round (epoch ms), for health; written by the claim thread only. */
    private volatile long lastLoopMillis;

    /**
     * @param queue the queue it claims from
     * @param slots how many of its tasks may run at once
     * @param config the engine's settings (poll interval, claim batch, claim-ahead, jitter)
     * @param claimer claims tasks
     * @param executor runs the handlers
     * @param running the engine's tracked executions, which this loop adds to and removes from
     * @param wiring what the executions it creates share
     * @param heldBack -1 if the last claim from a queue left no due task behind a limit, else the
     *     milliseconds until a key held back by its rate frees a start (see {@link
     *     Leases#heldBackMillis})
     */
    public QueueWorker(
            String queue,
            int slots,
            EngineConfig config,
            Claimer claimer,
            Executor executor,
            RunningSet running,
            Execution.Wiring wiring,
            java.util.function.ToLongFunction<String> heldBack) {
        this.heldBack = heldBack;
        this.queue = queue;
        this.slots = slots;
        this.config = config;
        this.claimer = claimer;
        this.executor = executor;
        this.running = running;
        this.wiring = wiring;
        this.ahead = new ClaimAhead(slots, config.claimBatch(), config.claimAhead());
    }

    String queue() {
        return queue;
    }

    /** @return whether the claim thread runs */
    public boolean alive() {
        Thread t = thread;
        return t != null && t.isAlive();
    }

    /** @return the wall-clock time (epoch ms) the claim loop last went round; 0 before it started */
    public long lastLoopMillis() {
        return lastLoopMillis;
    }

    public void start() {
        thread = new Thread(this, "dbtasks-claim-" + queue);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Stops claiming and returns the tasks claimed ahead that never started, for the caller to hand
     * back. Tasks already running are left to finish.
     */
    public List<Execution> stop() throws InterruptedException {
        claiming = false;
        wakeUp();
        if (thread != null) {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        }
        synchronized (this) {
            List<Execution> unstarted = new ArrayList<>(waiting);
            waiting.clear();
            return unstarted;
        }
    }

    /** Makes the loop look for tasks now instead of at the end of its sleep. */
    public void wakeUp() {
        if (wake.availablePermits() == 0) {
            wake.release();
        }
    }

    /**
     * A task of this queue finished (or was handed back before it started): start the next task
     * claimed ahead in its slot, or free the slot.
     *
     * @param handlerNanos how long its handler ran, in nanoseconds; negative if it never ran
     */
    void released(long handlerNanos) {
        Execution next;
        boolean wake;
        synchronized (this) {
            int before = room();
            if (handlerNanos >= 0) {
                ahead.handlerRan(handlerNanos);
            }
            next = claiming ? waiting.poll() : null;
            if (next == null) {
                active--;
            }
            int after = room();
            int worthwhile = worthwhileClaim();
            wake = before <= 0 || (before < worthwhile && after >= worthwhile) || wakeOnRelease;
        }
        if (next != null) {
            dispatch(next);
        }
        if (wake) {
            wakeUp(); // we were full, or enough room is free now for a worthwhile claim
        }
    }

    /** Tasks this loop may still claim: free slots plus free claim-ahead buffer. Guarded by this. */
    private int room() {
        return slots + ahead.size() - active - waiting.size();
    }

    /** The smallest claim worth a round trip while the queue is busy. Guarded by this. */
    private int worthwhileClaim() {
        return Math.max(1, Math.min(slots + ahead.size(), config.claimBatch()) / 2);
    }

    @Override
    public void run() {
        Duration poll = config.pollInterval();
        long errorSleep = Math.min(poll.toMillis(), MAX_CLAIM_ERROR_BACKOFF_MILLIS);
        boolean busy = false;
        long lastClaim = 0;
        while (claiming) {
            lastLoopMillis = System.currentTimeMillis();
            handBackStale();
            int room;
            int worthwhile;
            synchronized (this) {
                room = room();
                worthwhile = worthwhileClaim();
            }
            if (room <= 0) {
                sleep(poll.toMillis());
                continue;
            }
            if (busy && room < worthwhile) {
                long wait = BUSY_COOLDOWN_MILLIS - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastClaim);
                if (wait > 0) {
                    sleep(wait);
                    continue;
                }
            }
            int wanted = Math.min(room, config.claimBatch());
            List<TaskRows.Claimed> claimed;
            try {
                claimed = claimer.claim(queue, wanted);
                errorSleep = Math.min(poll.toMillis(), MAX_CLAIM_ERROR_BACKOFF_MILLIS);
            } catch (RuntimeException e) {
                // Full jitter within [half, whole] of the step, so engines that lost the database
                // together do not return in lockstep.
                long pause = errorSleep / 2 + (long) (config.random().getAsDouble() * (errorSleep / 2 + 1));
                log.error("Claim from queue {} failed; retrying in {} ms", queue, pause, e);
                sleep(pause);
                errorSleep = Math.min(errorSleep * 2, MAX_CLAIM_ERROR_BACKOFF_MILLIS);
                continue;
            }
            lastClaim = System.nanoTime();
            start(claimed);
            busy = claimed.size() == wanted;
            long heldMillis = heldBack.applyAsLong(queue);
            boolean held = heldMillis >= 0;
            wakeOnRelease = held;
            synchronized (this) {
                ahead.afterClaim(held);
            }
            if (!busy) {
                // Held back by a limit: a task finishing here wakes the loop; one finishing on
                // another engine is found within the shorter held-back poll, and a key's rate window
                // freeing a start at that moment.
                sleep(held ? Math.min(Math.min(poll.toMillis(), HELD_BACK_POLL_MILLIS), heldMillis) : poll.toMillis());
            }
        }
    }

    /** Hands back every task claimed ahead once the oldest has waited too long for a slot. */
    private void handBackStale() {
        List<Execution> stale;
        synchronized (this) {
            Execution oldest = waiting.peek();
            if (oldest == null) {
                return;
            }
            long waited = System.nanoTime() - oldest.claimedNanos();
            if (waited < TimeUnit.MILLISECONDS.toNanos(MAX_CLAIM_AHEAD_WAIT_MILLIS)) {
                return;
            }
            ahead.waitedTooLong(waited); // no more claiming ahead until tasks speed up
            stale = new ArrayList<>(waiting);
            waiting.clear();
        }
        log.info(
                "Queue {}: handing back {} task(s) claimed ahead that waited over {} ms for a slot",
                queue,
                stale.size(),
                MAX_CLAIM_AHEAD_WAIT_MILLIS);
        stale.forEach(this::handBackUnstarted);
    }

    /**
     * Runs what was claimed in free slots and keeps the rest waiting for one. A claim that returns
     * after {@link #stop} began (a slow database) is handed back unstarted, never buffered where no
     * one would start it.
     */
    private void start(List<TaskRows.Claimed> claimed) {
        List<Execution> now = new ArrayList<>(claimed.size());
        List<Execution> late = List.of();
        synchronized (this) {
            for (TaskRows.Claimed c : claimed) {
                Execution e = new Execution(c, wiring, this::finished);
                running.add(e); // the heartbeat renews its lease from now on, even before it starts
                if (!claiming) {
                    if (late.isEmpty()) {
                        late = new ArrayList<>();
                    }
                    late.add(e);
                } else if (active < slots) {
                    active++;
                    now.add(e);
                } else {
                    waiting.add(e);
                }
            }
        }
        for (Execution e : now) {
            dispatch(e);
        }
        late.forEach(this::handBackUnstarted);
    }

    /** A task claimed ahead that never started goes back to PENDING without using an attempt. */
    public void handBackUnstarted(Execution e) {
        e.handBack();
        running.remove(e);
    }

    /** Hands an execution to the handler executor; if it refuses, the task is handed back. */
    private void dispatch(Execution e) {
        try {
            executor.execute(e);
        } catch (RejectedExecutionException rejected) {
            log.warn("Executor rejected task {}; handing it back", e.task().id());
            e.handBack();
            finished(e);
        }
    }

    /** The execution's {@code onDone}: it ended on its thread (or was refused a thread). */
    private void finished(Execution e) {
        if (running.remove(e)) {
            released(e.handlerNanos());
        }
    }

    private void sleep(long millis) {
        try {
            if (wake.tryAcquire(millis, TimeUnit.MILLISECONDS)) {
                wake.drainPermits();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            claiming = false;
        }
    }
}
