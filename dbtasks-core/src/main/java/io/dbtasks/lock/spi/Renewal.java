package io.dbtasks.lock.spi;

import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeasedWork;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a lease alive while its work runs on the caller's thread: the heartbeat of run-once guards
 * and of {@code withLock}.
 *
 * <p>Every third of the lease a scheduler thread calls the renewal (a guarded UPDATE, or a Redis
 * check-and-extend). {@code false} means the lease is gone, taken over by someone else: the work's
 * thread is interrupted at once. A renewal that throws (the store briefly unreachable) is retried at
 * the next tick, unless the lease would end before then; then it counts as lost too, because
 * another holder may take over. The interrupt reaches the work only while it runs, never the caller
 * after the work returned.
 *
 * <p>When the work returns, no new renewal starts, and one already in flight is waited for (until the
 * lease would end at the latest) before the outcome is decided: cancelling the schedule does not stop
 * a renewal that is running, and that renewal may be the one that finds the lease taken over (issue
 * 8). A lease whose last renewal is older than the lease (the process stalled) counts as lost too.
 */
public final class Renewal implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Renewal.class);

    /** One renewal of the lease. */
    @FunctionalInterface
    public interface Renewer {
        /**
         * @return {@code true} if the lease was extended, {@code false} if it is gone
         * @throws Exception if the store could not be asked; retried at the next tick
         */
        boolean renew() throws Exception;
    }

    /**
     * How the work ended.
     *
     * @param lost whether a renewal found the lease gone (the work was interrupted if still running)
     * @param error what the work threw, or null
     */
    public record Outcome(boolean lost, @Nullable Throwable error) {}

    private final String threadPrefix;
    private @Nullable ScheduledExecutorService scheduler;
    private boolean closed;

    /** @param threadPrefix the name prefix of the renewal threads, created on first use */
    public Renewal(String threadPrefix) {
        this.threadPrefix = threadPrefix;
    }

    /**
     * Runs {@code work} on the calling thread, renewing every third of {@code duration}.
     *
     * @throws IllegalStateException if closed
     */
    public Outcome run(Lease lease, Duration duration, Renewer renewer, LeasedWork work) {
        Keeper keeper = new Keeper(Thread.currentThread(), lease, duration, renewer);
        ScheduledFuture<?> ticks =
                scheduler().scheduleWithFixedDelay(keeper, keeper.period, keeper.period, TimeUnit.MILLISECONDS);
        Throwable error = null;
        try {
            work.run(lease);
        } catch (Throwable t) {
            error = t;
        } finally {
            ticks.cancel(false);
        }
        return new Outcome(keeper.finish(), error);
    }

    private synchronized ScheduledExecutorService scheduler() {
        if (closed) {
            throw new IllegalStateException("This DbTasks was stopped; build a new one to run leased work");
        }
        if (scheduler == null) {
            AtomicInteger n = new AtomicInteger();
            ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(2, r -> {
                Thread t = new Thread(r, threadPrefix + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
            s.setRemoveOnCancelPolicy(true);
            scheduler = s;
        }
        return scheduler;
    }

    /** Stops the renewal threads; work still running loses its renewals. */
    @Override
    public synchronized void close() {
        closed = true;
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
    }

    /** The heartbeat of one lease. */
    private static final class Keeper implements Runnable {
        private final Thread worker;
        private final Lease lease;
        private final Duration duration;
        private final Renewer renewer;
        private final long period;
        private volatile long deadline;
        private boolean done;
        private boolean inFlight;
        private boolean lost;
        private boolean interrupted;

        Keeper(Thread worker, Lease lease, Duration duration, Renewer renewer) {
            this.worker = worker;
            this.lease = lease;
            this.duration = duration;
            this.renewer = renewer;
            this.period = Math.max(1, duration.toMillis() / 3);
            this.deadline = System.nanoTime() + duration.toNanos();
        }

        @Override
        public void run() {
            synchronized (this) {
                if (done) {
                    throw new CancellationSignal(); // the work returned: no renewal may start now
                }
                inFlight = true;
            }
            try {
                tick();
            } finally {
                synchronized (this) {
                    inFlight = false;
                    notifyAll();
                }
            }
        }

        private void tick() {
            long start = System.nanoTime();
            boolean kept;
            try {
                kept = renewer.renew();
                if (kept) {
                    deadline = start + duration.toNanos();
                } else {
                    log.warn(
                            "Lease of '{}' (token {}) was taken over while its work ran; interrupting the work",
                            lease.name(),
                            lease.token());
                }
            } catch (Exception e) {
                kept = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(period) < deadline;
                log.warn(
                        "Renewing the lease of '{}' (token {}) failed; {}",
                        lease.name(),
                        lease.token(),
                        kept ? "will retry" : "it ends before the next try, so the work is interrupted",
                        e);
            }
            if (!kept) {
                interrupt();
                throw new CancellationSignal(); // stops the fixed-delay schedule
            }
        }

        private synchronized void interrupt() {
            lost = true;
            if (!done) {
                worker.interrupt();
                interrupted = true;
            }
        }

        /**
         * Marks the work done, so nothing interrupts the caller from now on, and waits for a renewal in
         * flight, until the lease would end at the latest.
         */
        synchronized boolean finish() {
            done = true;
            boolean callerInterrupted = false;
            while (inFlight) {
                long leftNanos = deadline - System.nanoTime();
                if (leftNanos <= 0) {
                    lost = true; // the renewal did not answer within the lease: someone may have taken over
                    break;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, leftNanos);
                } catch (InterruptedException e) {
                    callerInterrupted = !interrupted; // an interrupt of ours is consumed here as well
                    interrupted = false;
                }
            }
            if (System.nanoTime() - deadline > 0) {
                lost = true; // no renewal answered within the lease (a stall): it may have been taken over
            }
            if (interrupted) {
                Thread.interrupted(); // ours, not the caller's: do not leak it
            }
            if (callerInterrupted) {
                Thread.currentThread().interrupt();
            }
            return lost;
        }
    }

    /** Thrown by a tick to end its periodic schedule. */
    private static final class CancellationSignal extends RuntimeException {
        CancellationSignal() {
            super(null, null, false, false);
        }
    }
}
