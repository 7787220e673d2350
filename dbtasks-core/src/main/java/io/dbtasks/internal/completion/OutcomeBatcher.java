package io.dbtasks.internal.completion;

import io.dbtasks.DbTasksException;
import io.dbtasks.TaskStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records attempt outcomes in batches, group-commit style: one writer thread takes whatever
 * outcomes have queued up (at most {@link #MAX_BATCH}) and writes the successes in one transaction
 * and the failures and retries in another, so under load many completions share a round trip and a
 * commit, and when idle a single outcome is written at once, with no artificial delay. The
 * handler's slot is freed as soon as it is queued, so the worker can claim the next task while the
 * outcome is written; at most twice the engine's handlers (at least {@link #MIN_PENDING}) may be queued.
 *
 * <p>Guarantees are those of one-by-one completion: each task is settled only under its own fencing
 * token (see {@link Completions#succeedAll} and {@link Completions#settleFailures}); if a batch
 * cannot be written (database down), its tasks stay RUNNING until their leases expire and rescue
 * retries them, and each failure's callback hears of the error.
 */
public final class OutcomeBatcher implements Runnable {
    /**
     * The most outcomes one write takes: large enough that hundreds of short handlers finishing at
     * once do not block in {@link #submit} behind a writer that takes too few at a time.
     */
    static final int MAX_BATCH = 500;
    /** Outcomes that may wait to be written before {@link #submit} blocks, at the least. */
    static final int MIN_PENDING = 2 * MAX_BATCH;
    /** How long a late success waits for a stopping writer before it is written by its own thread. */
    private static final long STOP_WAIT_MILLIS = 10_000;

    private static final Logger log = LoggerFactory.getLogger(OutcomeBatcher.class);

    /**
     * What to do once a failure's fate is known: called with the status written (empty: the lease
     * was lost) and {@code null}, or with {@code null} and the error that kept the batch from being
     * written.
     */
    @FunctionalInterface
    public interface FailureDone {
        void accept(Optional<TaskStatus> written, RuntimeException error);
    }

    /** An outcome with what to do once its fate is known. */
    private sealed interface Pending permits PendingSuccess, PendingFailure {}

    /** A success; {@code done} gets {@code true} if it was recorded. */
    private record PendingSuccess(Completions.Success success, Consumer<Boolean> done) implements Pending {}

    private record PendingFailure(Completions.Failure failure, FailureDone done) implements Pending {}

    private final Completions completions;
    private final LinkedBlockingQueue<Pending> queue;
    /**
     * One writer: a second one would split the queue into smaller batches, more statements and commits
     * for the same outcomes (see BENCHMARKS.md).
     */
    private final Thread thread;

    private volatile boolean running = true;

    /**
     * Told of each retry written: its queue and its backoff, so the engine can wake the queue's
     * claim loop when the retry is due instead of at its next poll.
     */
    private final java.util.function.BiConsumer<String, java.time.Duration> retried;

    OutcomeBatcher(Completions completions) {
        this(completions, (queue, delay) -> {}, 0);
    }

    /**
     * @param completions where outcomes are written
     * @param retried told of each retry written, with its queue and backoff
     * @param handlers how many handlers of the engine may run at once; the queue holds twice that
     *     (at least {@link #MIN_PENDING}), so that handlers block in {@link #submit} only once the
     *     writer is a whole round of them behind
     */
    public OutcomeBatcher(
            Completions completions, java.util.function.BiConsumer<String, java.time.Duration> retried, int handlers) {
        this.completions = completions;
        this.retried = retried;
        this.queue = new LinkedBlockingQueue<>(Math.max(MIN_PENDING, 2 * handlers));
        this.thread = new Thread(this, "dbtasks-complete");
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /**
     * Queues a success to be written. Blocks while its capacity successes already wait, so
     * a handler's slot stays taken (and its queue claims no more) while the writes fall behind:
     * without that, claims would outrun completions and RUNNING rows pile up. Waiting is not
     * interruptible, since the attempt is already settled; the interrupt is kept for the caller.
     * A success that arrives once the writer is stopping (a handler that outlived the engine's
     * stop) or gone is written on the caller's thread, so it is not left in a queue no one reads.
     */
    public void submit(Completions.Success success, Consumer<Boolean> done) {
        submit(new PendingSuccess(success, done));
    }

    /** Queues a failed attempt, a retry or FAILED, to be written; blocks as {@link #submit(Completions.Success, Consumer)}. */
    public void submit(Completions.Failure failure, FailureDone done) {
        submit(new PendingFailure(failure, done));
    }

    private void submit(Pending pending) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (queue.offer(pending, 100, TimeUnit.MILLISECONDS)) {
                        if (!running) {
                            writeIfWriterGone(pending);
                        }
                        return;
                    }
                    if (!thread.isAlive()) {
                        flush(List.of(pending));
                        return;
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Queued while the writer stops: it may have drained its queue and left just before. Once it has
     * exited, whichever of it and this thread removes the success from the queue writes it.
     */
    private void writeIfWriterGone(Pending pending) {
        // Not interruptible either: an interrupt here must not send the caller round to queue it twice.
        boolean interrupted = false;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STOP_WAIT_MILLIS);
        while (thread.isAlive() && System.nanoTime() < deadline) {
            try {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (!thread.isAlive() && queue.remove(pending)) {
            flush(List.of(pending));
        }
    }

    /** Writes whatever is queued and stops the writer; waits up to {@code timeoutMillis}. */
    public void stop(long timeoutMillis) {
        running = false;
        try {
            thread.join(timeoutMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void run() {
        List<Pending> batch = new ArrayList<>(MAX_BATCH);
        while (running || !queue.isEmpty()) {
            try {
                Pending first = queue.poll(50, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, MAX_BATCH - 1);
                flush(batch);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                running = false;
            } finally {
                batch.clear();
            }
        }
    }

    private void flush(List<Pending> batch) {
        List<PendingSuccess> successes = new ArrayList<>(batch.size());
        List<PendingFailure> failures = new ArrayList<>();
        for (Pending p : batch) {
            if (p instanceof PendingSuccess s) {
                successes.add(s);
            } else {
                failures.add((PendingFailure) p);
            }
        }
        if (!successes.isEmpty()) {
            flushSuccesses(successes);
        }
        if (!failures.isEmpty()) {
            flushFailures(failures);
        }
    }

    private void flushSuccesses(List<PendingSuccess> batch) {
        List<Completions.Success> successes = new ArrayList<>(batch.size());
        for (PendingSuccess p : batch) {
            successes.add(p.success());
        }
        Set<Long> recorded;
        try {
            recorded = completions.succeedAll(successes);
        } catch (DbTasksException | IllegalStateException e) {
            log.error(
                    "Could not record {} successful attempt(s); their tasks will be rescued after their leases"
                            + " expire",
                    batch.size(),
                    e);
            return;
        }
        for (PendingSuccess p : batch) {
            p.done().accept(recorded.contains(p.success().task().fencingToken()));
        }
    }

    private void flushFailures(List<PendingFailure> batch) {
        List<Completions.Failure> failures = new ArrayList<>(batch.size());
        for (PendingFailure p : batch) {
            failures.add(p.failure());
        }
        Map<Long, TaskStatus> written;
        try {
            written = completions.settleFailures(failures);
        } catch (DbTasksException | IllegalStateException e) {
            for (PendingFailure p : batch) {
                p.done().accept(null, e);
            }
            return;
        }
        for (PendingFailure p : batch) {
            TaskStatus status = written.get(p.failure().task().fencingToken());
            if (status == TaskStatus.PENDING) {
                retried.accept(p.failure().task().queue(), p.failure().retryDelay());
            }
            p.done().accept(Optional.ofNullable(status), null);
        }
    }
}
