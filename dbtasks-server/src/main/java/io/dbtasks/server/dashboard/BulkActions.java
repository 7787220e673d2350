package io.dbtasks.server.dashboard;

import io.dbtasks.DbTasks;
import io.dbtasks.IllegalTransitionException;
import io.dbtasks.TaskNotFoundException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * Operator actions on one task or on every task a filter matches.
 *
 * <p>A bulk action runs in the background on one thread: it walks the filter by keyset in batches
 * of {@value #BATCH} ids ({@link DashboardStore#ids}) and applies the action to each task through
 * {@link DbTasks}, whose guarded updates decide per task (a task that changed state meanwhile is
 * counted as skipped, with the reason). It covers everything the filter matches, not one page, and
 * its progress is kept for the dashboard to poll. The walk is newest first and takes ids below the
 * last one seen, so tasks enqueued after it started are not touched.
 *
 * <p>Thread-safe.
 */
@Component
public class BulkActions implements DisposableBean {
    private static final Logger log = LoggerFactory.getLogger(BulkActions.class);
    static final int BATCH = 500;
    /** How many finished bulk jobs are remembered. */
    static final int KEEP = 50;

    /** What can be done to a task. */
    public enum Action {
        RETRY,
        CANCEL,
        RUN_NOW,
        DELETE;

        /** @return the form value, lower case with dashes */
        public String param() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        /** @return the action named by a form value */
        static Action of(String param) {
            for (Action a : values()) {
                if (a.param().equals(param)) {
                    return a;
                }
            }
            throw new IllegalArgumentException("action must be one of retry, cancel, run-now, delete");
        }
    }

    /** Progress of one bulk action; counters are live while it runs. */
    public static final class Job {
        private final long id;
        private final Action action;
        private final TaskSearch search;
        private final String by;
        private final Instant startedAt = Instant.now();
        private final AtomicLong done = new AtomicLong();
        private final AtomicLong skipped = new AtomicLong();
        private volatile String lastSkipReason;
        private volatile String error;
        private volatile Instant finishedAt;
        private final CompletableFuture<Job> whenFinished = new CompletableFuture<>();

        Job(long id, Action action, TaskSearch search, String by) {
            this.id = id;
            this.action = action;
            this.search = search;
            this.by = by;
        }

        public long id() {
            return id;
        }

        public Action action() {
            return action;
        }

        public TaskSearch search() {
            return search;
        }

        public String by() {
            return by;
        }

        public Instant startedAt() {
            return startedAt;
        }

        public long done() {
            return done.get();
        }

        public long skipped() {
            return skipped.get();
        }

        public String lastSkipReason() {
            return lastSkipReason;
        }

        public String error() {
            return error;
        }

        public Instant finishedAt() {
            return finishedAt;
        }

        public boolean finished() {
            return finishedAt != null;
        }

        /** @return completes with this job when it has finished, however it ended */
        public CompletionStage<Job> whenFinished() {
            return whenFinished.minimalCompletionStage();
        }
    }

    private final DbTasks dbTasks;
    private final DashboardStore store;
    private final OverviewSnapshots snapshots;
    private final ExecutorService executor;
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, Job> jobs = new LinkedHashMap<>();

    /**
     * @param dbTasks the engine, which performs each change
     * @param store walks the filter
     * @param snapshots refreshed after each action
     */
    public BulkActions(DbTasks dbTasks, DashboardStore store, OverviewSnapshots snapshots) {
        this.dbTasks = dbTasks;
        this.store = store;
        this.snapshots = snapshots;
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "dbtasks-dashboard-bulk");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Applies an action to one task.
     *
     * @throws TaskNotFoundException if there is no such task
     * @throws IllegalTransitionException if its state does not allow the action
     */
    public void apply(Action action, long id) {
        switch (action) {
            case RETRY -> dbTasks.retry(id);
            case CANCEL -> dbTasks.cancel(id);
            case DELETE -> dbTasks.delete(id);
            case RUN_NOW -> runNow(id);
        }
        snapshots.refreshSoon();
    }

    /** PENDING: due now; FAILED or CANCELLED: retried now; decided by one guarded update. */
    private void runNow(long id) {
        dbTasks.runNow(id);
    }

    /**
     * Starts an action over every task {@code search} matches.
     *
     * @param by who asked, for the record
     * @return the job, running in the background
     */
    public Job start(Action action, TaskSearch search, String by) {
        Job job = new Job(ids.incrementAndGet(), action, search, by);
        synchronized (jobs) {
            jobs.put(job.id(), job);
            while (jobs.size() > KEEP) {
                Long oldest = jobs.keySet().iterator().next();
                if (!jobs.get(oldest).finished()) {
                    break;
                }
                jobs.remove(oldest);
            }
        }
        log.info("Bulk {} by {} over [{}] started (job {})", action, by, search.query(), job.id());
        executor.execute(() -> run(job));
        return job;
    }

    private void run(Job job) {
        try {
            Long cursor = null;
            do {
                DashboardStore.IdBatch batch = store.ids(job.search, cursor, BATCH);
                for (Long id : batch.ids()) {
                    try {
                        apply(job.action, id);
                        job.done.incrementAndGet();
                    } catch (IllegalTransitionException | TaskNotFoundException e) {
                        job.skipped.incrementAndGet();
                        job.lastSkipReason = e.getMessage();
                    }
                }
                cursor = batch.lastScanned();
            } while (cursor != null);
        } catch (RuntimeException e) {
            job.error = e.getMessage();
            log.warn("Bulk {} job {} stopped: {}", job.action, job.id, e.getMessage());
        } finally {
            job.finishedAt = Instant.now();
            snapshots.refreshSoon();
            log.info("Bulk {} job {}: {} done, {} skipped", job.action, job.id, job.done(), job.skipped());
            job.whenFinished.complete(job);
        }
    }

    /** @return the job, if still remembered */
    public Optional<Job> job(long id) {
        synchronized (jobs) {
            return Optional.ofNullable(jobs.get(id));
        }
    }

    /** @return remembered jobs, newest first */
    public List<Job> jobs() {
        synchronized (jobs) {
            List<Job> l = new ArrayList<>(jobs.values());
            java.util.Collections.reverse(l);
            return l;
        }
    }

    @Override
    public void destroy() {
        executor.shutdownNow();
    }
}
