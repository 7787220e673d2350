package io.dbtasks.internal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claim loop of one queue on one engine. It claims only as many tasks as it has free slots
 * (never more than the claim batch), so a busy engine leaves work for others. When a claim comes
 * back short the queue is drained and it sleeps for the poll interval, unless a local enqueue or a
 * notification wakes it; when all slots are busy it sleeps until one frees up.
 *
 * <p>While the queue is busy (the last claim came back full), it does not claim for every single
 * slot that frees: it waits until half its slots are free, or {@value #BUSY_COOLDOWN_MILLIS} ms
 * have passed since the last claim, whichever comes first. Short tasks are then claimed in batches
 * rather than one statement per task, and a long task's freed slot idles at most that long.
 */
final class QueueWorker implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(QueueWorker.class);
    static final long BUSY_COOLDOWN_MILLIS = 5;

    private final String queue;
    private final int concurrency;
    private final int minBusyClaim;
    private final Engine engine;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Semaphore wake = new Semaphore(0);
    private volatile boolean running = true;
    private Thread thread;

    QueueWorker(String queue, int concurrency, Engine engine) {
        this.queue = queue;
        this.concurrency = concurrency;
        this.engine = engine;
        this.minBusyClaim = Math.max(1, Math.min(concurrency, engine.config().claimBatch()) / 2);
    }

    String queue() {
        return queue;
    }

    void start() {
        thread = new Thread(this, "dbtasks-claim-" + queue);
        thread.setDaemon(true);
        thread.start();
    }

    void stop() throws InterruptedException {
        running = false;
        wakeUp();
        if (thread != null) {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        }
    }

    /** Makes the loop look for tasks now instead of at the end of its sleep. */
    void wakeUp() {
        if (wake.availablePermits() == 0) {
            wake.release();
        }
    }

    /** A task of this queue finished: free its slot. */
    void released() {
        int before = inFlight.getAndDecrement();
        if (before == concurrency || concurrency - (before - 1) == minBusyClaim) {
            wakeUp(); // we were full, or enough slots are free now for a worthwhile claim
        }
    }

    @Override
    public void run() {
        Duration poll = engine.config().pollInterval();
        long errorSleep = poll.toMillis();
        boolean busy = false;
        long lastClaim = 0;
        while (running) {
            int free = concurrency - inFlight.get();
            if (free <= 0) {
                sleep(poll.toMillis());
                continue;
            }
            if (busy && free < minBusyClaim) {
                long wait = BUSY_COOLDOWN_MILLIS - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastClaim);
                if (wait > 0) {
                    sleep(wait);
                    continue;
                }
            }
            int wanted = Math.min(free, engine.config().claimBatch());
            List<TaskRows.Claimed> claimed;
            try {
                claimed = engine.leases().claim(queue, wanted);
                errorSleep = poll.toMillis();
            } catch (RuntimeException e) {
                log.error("Claim from queue {} failed; retrying in {} ms", queue, errorSleep, e);
                sleep(errorSleep);
                errorSleep = Math.min(errorSleep * 2, Math.max(poll.toMillis(), 30_000));
                continue;
            }
            lastClaim = System.nanoTime();
            for (TaskRows.Claimed c : claimed) {
                inFlight.incrementAndGet();
                engine.launch(c, this);
            }
            busy = claimed.size() == wanted;
            if (!busy) {
                sleep(poll.toMillis());
            }
        }
    }

    private void sleep(long millis) {
        try {
            if (wake.tryAcquire(millis, TimeUnit.MILLISECONDS)) {
                wake.drainPermits();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }
}
