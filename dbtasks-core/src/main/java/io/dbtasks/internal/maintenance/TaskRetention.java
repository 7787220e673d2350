package io.dbtasks.internal.maintenance;

import io.dbtasks.DbTasksException;
import io.dbtasks.TaskStatus;
import io.dbtasks.inbox.Inbox;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeaseLocks;
import io.dbtasks.once.RunOnceGuards;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes finished tasks (with their attempts), run-once guards and inbox records older than their
 * retention, on the engine's scheduler. One engine of the cluster at a time sweeps (lease lock
 * {@value #LOCK}). Tasks go in batches of {@value Retention#BATCH}, each its own short transaction:
 * the batch's ids are locked with {@code FOR UPDATE SKIP LOCKED} on the finished-task index
 * (status, finished_at), their attempts and then the tasks are deleted by id. Age is by the
 * database clock. After each batch the sweep pauses as long as the batch took, so it takes at
 * most about half of the database time it could and leaves the rest to claims and completions
 * (an unpaced sweep slows a burn-down beside it markedly; see BENCHMARKS.md).
 *
 * <p>The sweep also deletes the rows of concurrency keys ({@code dbtasks_concurrency_key}) with no
 * PENDING or RUNNING task, locked with {@code FOR UPDATE SKIP LOCKED}: a row a claim holds is left
 * for a later sweep, so the sweep never makes a claim wait, and a claim that finds a row gone creates
 * it again.
 */
public final class TaskRetention {
    static final String LOCK = "dbtasks.retention";
    private static final Logger log = LoggerFactory.getLogger(TaskRetention.class);

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final LeaseLocks locks;
    private final RunOnceGuards guards;
    private final Inbox inbox;
    private final Map<TaskStatus, Duration> taskAges;
    private final Duration guardAge;
    private final Duration inboxAge;

    public TaskRetention(
            Jdbc jdbc,
            Dialect dialect,
            LeaseLocks locks,
            RunOnceGuards guards,
            Inbox inbox,
            Map<TaskStatus, Duration> taskAges,
            Duration guardAge,
            Duration inboxAge) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.locks = locks;
        this.guards = guards;
        this.inbox = inbox;
        this.taskAges = taskAges;
        this.guardAge = guardAge;
        this.inboxAge = inboxAge;
    }

    /** One sweep, if this engine gets the lock; failures are logged and retried at the next run. */
    public void run() {
        try {
            Optional<Lease> lease = locks.tryAcquire(LOCK, Duration.ofMinutes(30));
            if (lease.isEmpty()) {
                return; // another engine is sweeping
            }
            try {
                sweep();
            } finally {
                locks.release(lease.get());
            }
        } catch (DbTasksException | IllegalStateException e) {
            log.warn("Retention sweep failed; it runs again at the next interval", e);
        }
    }

    /**
     * @return rows deleted: tasks (attempts not counted), guards, inbox records; the rows of idle
     *     concurrency keys are deleted too but not counted
     */
    public long sweep() {
        long start = System.nanoTime();
        long tasks = 0;
        for (Map.Entry<TaskStatus, Duration> e : taskAges.entrySet()) {
            if (!e.getValue().isZero()) {
                tasks += deleteTasks(e.getKey(), e.getValue());
            }
        }
        int guardRows = guardAge.isZero() ? 0 : guards.deleteOlderThan(guardAge);
        int inboxRows = inboxAge.isZero() ? 0 : inbox.deleteOlderThan(inboxAge);
        int keyRows = deleteIdleKeys();
        if (tasks + guardRows + inboxRows + keyRows > 0) {
            log.info(
                    "dbtasks retention deleted {} finished task(s), {} run-once guard(s), {} inbox record(s),"
                            + " {} idle concurrency key(s) in {} ms",
                    tasks,
                    guardRows,
                    inboxRows,
                    keyRows,
                    (System.nanoTime() - start) / 1_000_000);
        }
        return tasks + guardRows + inboxRows;
    }

    /**
     * With deleted workflow steps: the edges into them (they are finished, so nothing counts on those
     * edges any more) and each workflow row none of whose steps is left.
     */
    private static void deleteWorkflowRows(Connection c, List<Long> ids, java.util.Set<Long> workflows)
            throws java.sql.SQLException {
        String in = String.join(", ", Collections.nCopies(ids.size(), "?"));
        try (PreparedStatement ps =
                c.prepareStatement("DELETE FROM dbtasks_dependency WHERE task_id IN (" + in + ")")) {
            bind(ps, ids);
            ps.executeUpdate();
        }
        List<Long> candidates = new ArrayList<>(workflows);
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_workflow WHERE id IN ("
                + String.join(", ", Collections.nCopies(candidates.size(), "?"))
                + ") AND NOT EXISTS (SELECT 1 FROM dbtasks_task t WHERE t.workflow_id = dbtasks_workflow.id)")) {
            bind(ps, candidates);
            ps.executeUpdate();
        }
    }

    /** Deletes tasks of a finished {@code status} that finished more than {@code age} ago. */
    long deleteTasks(TaskStatus status, Duration age) {
        if (status != TaskStatus.SUCCEEDED && status != TaskStatus.FAILED && status != TaskStatus.CANCELLED) {
            throw new IllegalArgumentException("only finished tasks are deleted, not " + status);
        }
        // The status is inlined (an enum constant, not input), so PostgreSQL matches the partial index.
        String select = "SELECT id, workflow_id FROM dbtasks_task WHERE status = '" + status.name()
                + "' AND finished_at < " + dialect.nowPlusMillis() + " LIMIT ?" + dialect.forUpdateSkipLocked();
        long total = 0;
        int found;
        do {
            long batchStart = System.nanoTime();
            int[] batch = jdbc.inTransaction("Retention of " + status + " tasks", c -> {
                dialect.readCommittedTransaction(c);
                List<Long> ids = new ArrayList<>(Retention.BATCH);
                java.util.Set<Long> workflows = new java.util.TreeSet<>();
                try (PreparedStatement ps = c.prepareStatement(select)) {
                    ps.setLong(1, -age.toMillis());
                    ps.setInt(2, Retention.BATCH);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            ids.add(rs.getLong(1));
                            long workflow = rs.getLong(2);
                            if (!rs.wasNull()) {
                                workflows.add(workflow);
                            }
                        }
                    }
                }
                if (ids.isEmpty()) {
                    return new int[] {0, 0};
                }
                String in = String.join(", ", Collections.nCopies(ids.size(), "?"));
                try (PreparedStatement ps =
                        c.prepareStatement("DELETE FROM dbtasks_attempt WHERE task_id IN (" + in + ")")) {
                    bind(ps, ids);
                    ps.executeUpdate();
                }
                int deleted;
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_task WHERE id IN (" + in + ")")) {
                    bind(ps, ids);
                    deleted = ps.executeUpdate();
                }
                if (!workflows.isEmpty()) {
                    deleteWorkflowRows(c, ids, workflows);
                }
                return new int[] {ids.size(), deleted};
            });
            found = batch[0];
            total += batch[1];
            if (found == Retention.BATCH) {
                pause(System.nanoTime() - batchStart);
            }
        } while (found == Retention.BATCH);
        return total;
    }

    /**
     * Deletes the rows of concurrency keys with no PENDING or RUNNING task, in batches; rows another
     * transaction holds (a claim of the key) are skipped. A task of the key enqueued meanwhile is
     * safe: no claim starts it without the key's row, which the claim creates again.
     *
     * @return how many rows were deleted
     */
    int deleteIdleKeys() {
        String idle = " NOT EXISTS (SELECT 1 FROM dbtasks_task t WHERE t.concurrency_key = k.concurrency_key"
                + " AND t.queue = k.queue AND t.status IN ('" + TaskStatus.PENDING.name() + "', '"
                + TaskStatus.RUNNING.name() + "'))";
        String select = "SELECT k.queue, k.concurrency_key FROM dbtasks_concurrency_key k WHERE" + idle + " LIMIT ?"
                + dialect.forUpdateSkipLocked();
        String delete = "DELETE FROM dbtasks_concurrency_key WHERE queue = ? AND concurrency_key = ?";
        int total = 0;
        int found;
        do {
            int[] batch = jdbc.inTransaction("Retention of idle concurrency keys", c -> {
                dialect.readCommittedTransaction(c);
                List<String[]> keys = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement(select)) {
                    ps.setInt(1, Retention.BATCH);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            keys.add(new String[] {rs.getString(1), rs.getString(2)});
                        }
                    }
                }
                int deleted = 0;
                if (!keys.isEmpty()) {
                    try (PreparedStatement ps = c.prepareStatement(delete)) {
                        for (String[] k : keys) {
                            ps.setString(1, k[0]);
                            ps.setString(2, k[1]);
                            ps.addBatch();
                        }
                        for (int n : ps.executeBatch()) {
                            deleted += n == PreparedStatement.SUCCESS_NO_INFO ? 1 : n;
                        }
                    }
                }
                return new int[] {keys.size(), deleted};
            });
            found = batch[0];
            total += batch[1];
        } while (found == Retention.BATCH);
        return total;
    }

    /** Sleeps as long as the last batch took (capped at 5 s), yielding the database to the workers. */
    private static void pause(long batchNanos) {
        try {
            java.util.concurrent.TimeUnit.NANOSECONDS.sleep(Math.min(batchNanos, 5_000_000_000L));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("retention sweep interrupted", e);
        }
    }

    private static void bind(PreparedStatement ps, List<Long> ids) throws java.sql.SQLException {
        for (int i = 0; i < ids.size(); i++) {
            ps.setLong(i + 1, ids.get(i));
        }
    }
}
