package io.dbtasks.internal.maintenance;

import io.dbtasks.DbTasksException;
import io.dbtasks.TaskStatus;
import io.dbtasks.inbox.Inbox;
import io.dbtasks.internal.completion.HistoryCounts;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.query.TaskKeys;
import io.dbtasks.internal.support.DbClock;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.lock.Lease;
import io.dbtasks.lock.LeaseLocks;
import io.dbtasks.once.RunOnceGuards;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes finished tasks (with their attempts), run-once guards and inbox records older than their
 * retention, on the engine's scheduler. One engine of the cluster at a time sweeps (lease lock
 * {@value #LOCK}). Tasks go in batches of {@value Retention#BATCH}, each its own short transaction:
 * the batch's ids are locked with {@code FOR UPDATE SKIP LOCKED} on the finished-task index
 * (status, finished_at), their attempts and then the tasks are deleted by id, and the batch's rows
 * are subtracted from the hourly counts of finished tasks in the same transaction ({@link
 * HistoryCounts#subtract}), so a counted hour stays exact. Age is by the
 * database clock. After each batch the sweep pauses as long as the batch took, so it takes at
 * most about half of the database time it could and leaves the rest to claims and completions
 * (an unpaced sweep slows a burn-down beside it markedly; see BENCHMARKS.md). A batch the database
 * rolls back as a deadlock victim (a claim or settle locking the same index range on MariaDB) runs
 * again ({@link Jdbc#retryingDeadlocks}): it deletes only what it locked itself, so running it again
 * is safe, and a sweep called through the API does not fail on a conflict the database resolved.
 *
 * <p>Ages are by finished state, and a queue may override a state's age for itself. A state's
 * default age deletes the rows of every queue without an override for that state ({@code queue NOT
 * IN (...)}); each override deletes its queue's rows by its own age, through the same batches. Where
 * history is partitioned by day, a day is dropped whole only once it is older than the longest age of
 * any state in any queue; rows kept shorter go row by row first. A workflow's step is old by the age of
 * its own queue and state, and the workflow goes whole once every step is old; a chunked batch's
 * chunk tasks, chunk rows and batch row likewise go together once every chunk task is old.
 *
 * <p>The sweep also deletes the rows of concurrency keys ({@code dbtasks_concurrency_key}) with no
 * PENDING or RUNNING task, locked with {@code FOR UPDATE SKIP LOCKED}: a row a claim holds is left
 * for a later sweep, so the sweep never makes a claim wait, and a claim that finds a row gone creates
 * it again (MariaDB and H2; PostgreSQL's claims lock keys with advisory locks and leave no rows, so
 * there the sweep only removes rows earlier versions left). It deletes the logged starts of rate-limited keys once they have left every window.
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
    private final Map<String, Map<TaskStatus, Duration>> queueAges;
    private final Duration guardAge;
    private final Duration inboxAge;
    private final HistoryCounts history;
    private final HistoryPartitions partitions;
    private final DbClock clock;

    /**
     * Where the next row-by-row sweep of each state and queue scope reads from (see {@link
     * #deleteTasks}); kept by this engine only, so an engine that takes the sweep over reads from the
     * oldest row once.
     */
    private final Map<String, Mark> marks = new ConcurrentHashMap<>();

    /** Where a sweep of one scope reads from, and when its last read from the oldest row began. */
    private record Mark(Instant from, long fullScanNanos) {
        Mark later(Mark other) {
            return new Mark(
                    from.isAfter(other.from) ? from : other.from,
                    fullScanNanos - other.fullScanNanos > 0 ? fullScanNanos : other.fullScanNanos);
        }
    }

    /** One committed batch of a row-by-row sweep: the rows it deleted and the last one's finish. */
    private record Batch(int deleted, Instant last) {}

    /**
     * A later sweep reads again the rows that finished this long before the last sweep's cutoff: rows
     * that committed after that sweep with an earlier {@code finished_at} (a settle's transaction
     * began before, or another node's clock is behind).
     */
    static final Duration REREAD = Duration.ofMinutes(10);

    /** How often a sweep reads a scope from its oldest row, for rows an earlier sweep skipped. */
    static final Duration FULL_SCAN_EVERY = Duration.ofHours(24);

    public TaskRetention(
            Jdbc jdbc,
            Dialect dialect,
            LeaseLocks locks,
            RunOnceGuards guards,
            Inbox inbox,
            Map<TaskStatus, Duration> taskAges,
            Map<String, Map<TaskStatus, Duration>> queueAges,
            Duration guardAge,
            Duration inboxAge) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.locks = locks;
        this.guards = guards;
        this.inbox = inbox;
        this.taskAges = taskAges;
        this.queueAges = queueAges;
        this.guardAge = guardAge;
        this.inboxAge = inboxAge;
        this.history = new HistoryCounts(dialect);
        this.partitions = new HistoryPartitions(jdbc, dialect);
        this.clock = new DbClock(dialect);
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
        long tasks = deleteWorkflows() + deleteBatches();
        // Where history is partitioned by day, the longest age (over states and queues) drops whole
        // days, and only rows kept shorter are deleted row by row (their space returns when their day
        // is dropped).
        Duration longest = longestAge();
        if (longest != null) {
            tasks += partitions.dropOlderThan(longest);
        }
        for (TaskStatus status : TaskStatus.values()) {
            if (!status.isFinal()) {
                continue;
            }
            List<String> overridden = overridden(status);
            Duration age = taskAges.getOrDefault(status, Duration.ZERO);
            if (!age.isZero() && !byDay(age, longest)) {
                tasks += deleteTasks(status, age, null, overridden);
            }
            for (String queue : overridden) {
                Duration queueAge = queueAges.get(queue).get(status);
                if (!queueAge.isZero() && !byDay(queueAge, longest)) {
                    tasks += deleteTasks(status, queueAge, queue, List.of());
                }
            }
        }
        int guardRows = guardAge.isZero() ? 0 : guards.deleteOlderThan(guardAge);
        int inboxRows = inboxAge.isZero() ? 0 : inbox.deleteOlderThan(inboxAge);
        int keyRows = deleteIdleKeys();
        int rateRows = deleteExpiredStarts();
        if (tasks + guardRows + inboxRows + keyRows + rateRows > 0) {
            log.info(
                    "dbtasks retention deleted {} finished task(s), {} run-once guard(s), {} inbox record(s),"
                            + " {} idle concurrency key(s), {} expired rate-limit start(s) in {} ms",
                    tasks,
                    guardRows,
                    inboxRows,
                    keyRows,
                    rateRows,
                    (System.nanoTime() - start) / 1_000_000);
        }
        return tasks + guardRows + inboxRows;
    }

    /** @return whether rows kept {@code age} leave with their day's partition, not row by row */
    private boolean byDay(Duration age, Duration longest) {
        return longest != null && dialect.partitionsHistory() && age.equals(longest);
    }

    /** @return the queues with an age of their own for {@code status}, in name order */
    private List<String> overridden(TaskStatus status) {
        List<String> queues = new ArrayList<>();
        queueAges.forEach((queue, ages) -> {
            if (ages.containsKey(status)) {
                queues.add(queue);
            }
        });
        Collections.sort(queues);
        return queues;
    }

    /**
     * @return the longest retention of a finished state in any queue, overrides included, or {@code
     *     null} if some finished state is kept for ever in some queue (then no day of history is ever
     *     wholly old)
     */
    private Duration longestAge() {
        Duration longest = Duration.ZERO;
        List<Duration> ages = new ArrayList<>();
        for (TaskStatus status : TaskStatus.values()) {
            if (status.isFinal()) {
                ages.add(taskAges.getOrDefault(status, Duration.ZERO));
            }
        }
        for (Map<TaskStatus, Duration> byStatus : queueAges.values()) {
            byStatus.forEach((status, age) -> {
                if (status.isFinal()) {
                    ages.add(age);
                }
            });
        }
        for (Duration age : ages) {
            if (age.isZero()) {
                return null;
            }
            longest = age.compareTo(longest) > 0 ? age : longest;
        }
        return longest;
    }

    /**
     * The condition that task {@code t} is old: finished longer ago than the age of its state in its
     * queue.
     *
     * @param isOld a SQL expression on {@code t}, 1 if old, else 0
     * @param ages its parameters in order (queue names and millisecond offsets), for {@link #bindAll}
     */
    private record OldCondition(String isOld, List<Object> ages) {}

    /** @return the condition that a task {@code t} is old, or {@code null} if no finished state ever is */
    private OldCondition oldCondition() {
        // A task is old when it finished longer ago than the age of its state in its queue: the
        // queue's override where it has one, else the state's default. A zero age is never old.
        StringBuilder old = new StringBuilder();
        List<Object> ages = new ArrayList<>();
        for (TaskStatus status : TaskStatus.values()) {
            if (!status.isFinal()) {
                continue;
            }
            List<String> overridden = overridden(status);
            Duration age = taskAges.getOrDefault(status, Duration.ZERO);
            if (!age.isZero()) {
                old.append(old.length() == 0 ? "" : " OR ")
                        .append("(t.status = '")
                        .append(status.name())
                        .append("'")
                        .append(queueClause("t.queue", null, overridden))
                        .append(" AND t.finished_at < ")
                        .append(dialect.nowPlusMillis())
                        .append(')');
                ages.addAll(overridden);
                ages.add(-age.toMillis());
            }
            for (String queue : overridden) {
                Duration queueAge = queueAges.get(queue).get(status);
                if (!queueAge.isZero()) {
                    old.append(old.length() == 0 ? "" : " OR ")
                            .append("(t.status = '")
                            .append(status.name())
                            .append("'")
                            .append(queueClause("t.queue", queue, List.of()))
                            .append(" AND t.finished_at < ")
                            .append(dialect.nowPlusMillis())
                            .append(')');
                    ages.add(queue);
                    ages.add(-queueAge.toMillis());
                }
            }
        }
        if (ages.isEmpty()) {
            return null;
        }
        return new OldCondition("CASE WHEN " + old + " THEN 1 ELSE 0 END", List.copyOf(ages));
    }

    /**
     * Deletes whole workflows (steps with their attempts, edges, the workflow row) every step of which
     * is finished and older than the retention of its state in its queue, in batches of {@value Retention#BATCH}
     * workflows, each its own transaction. A workflow with one step still unfinished or too recent
     * stays whole: its finished steps' results and edges are what its waiting steps read and count.
     * The steps are locked and checked again in the deleting transaction, so a step retried in
     * between keeps its workflow.
     *
     * @return steps deleted
     */
    long deleteWorkflows() {
        OldCondition cond = oldCondition();
        if (cond == null) {
            return 0;
        }
        String isOld = cond.isOld();
        List<Object> ages = cond.ages();
        String candidates = "SELECT w.id FROM dbtasks_workflow w WHERE w.id > ? AND NOT EXISTS"
                + " (SELECT 1 FROM dbtasks_task t WHERE t.workflow_id = w.id AND " + isOld + " = 0)"
                + " ORDER BY w.id LIMIT ?";
        long total = 0;
        long after = Long.MIN_VALUE;
        while (true) {
            long from = after;
            List<Long> workflows = jdbc.withConnection("Find finished workflows", c -> {
                List<Long> ids = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement(candidates)) {
                    int i = 1;
                    ps.setLong(i++, from);
                    i = bindAll(ps, i, ages);
                    ps.setInt(i, Retention.BATCH);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            ids.add(rs.getLong(1));
                        }
                    }
                }
                return ids;
            });
            if (workflows.isEmpty()) {
                return total;
            }
            after = workflows.get(workflows.size() - 1);
            long batchStart = System.nanoTime();
            total += Jdbc.retryingDeadlocks(() ->
                    jdbc.inTransaction("Retention of finished workflows", c -> deleteWhole(c, workflows, isOld, ages)));
            if (workflows.size() < Retention.BATCH) {
                return total;
            }
            pause(System.nanoTime() - batchStart);
        }
    }

    /** Locks the steps of {@code workflows}, and deletes each workflow all of whose steps are old. */
    private int deleteWhole(Connection c, List<Long> workflows, String isOld, List<Object> ages)
            throws java.sql.SQLException {
        Map<Long, List<Long>> steps = new java.util.TreeMap<>();
        java.util.Set<Long> keep = new java.util.HashSet<>();
        Map<Long, Object[]> finished = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT t.id, t.workflow_id, " + isOld
                + " AS is_old, t.queue, t.status, t.finished_at FROM "
                + "dbtasks_task t WHERE t.workflow_id IN (" + marks(workflows.size()) + ") ORDER BY t.id"
                + dialect.forUpdate())) {
            int i = bindAll(ps, 1, ages);
            for (long w : workflows) {
                ps.setLong(i++, w);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    steps.computeIfAbsent(rs.getLong(2), k -> new ArrayList<>()).add(rs.getLong(1));
                    if (rs.getInt(3) == 0) {
                        keep.add(rs.getLong(2));
                    }
                    finished.put(rs.getLong(1), new Object[] {
                        rs.getString(4), TaskStatus.valueOf(rs.getString(5)), dialect.getInstant(rs, "finished_at")
                    });
                }
            }
        }
        List<Long> gone = new ArrayList<>();
        List<Long> ids = new ArrayList<>();
        for (long w : workflows) {
            if (!keep.contains(w)) {
                gone.add(w);
                ids.addAll(steps.getOrDefault(w, List.of()));
            }
        }
        int deleted = 0;
        if (!ids.isEmpty()) {
            String in = marks(ids.size());
            try (PreparedStatement ps =
                    c.prepareStatement("DELETE FROM dbtasks_attempt WHERE task_id IN (" + in + ")")) {
                bind(ps, ids);
                ps.executeUpdate();
            }
            try (PreparedStatement ps = c.prepareStatement(
                    "DELETE FROM dbtasks_dependency WHERE task_id IN (" + in + ") OR depends_on IN (" + in + ")")) {
                bind(ps, ids);
                for (int i = 0; i < ids.size(); i++) {
                    ps.setLong(ids.size() + i + 1, ids.get(i));
                }
                ps.executeUpdate();
            }
            TaskKeys.deleteOf(c, ids);
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_task WHERE id IN (" + in + ")")) {
                bind(ps, ids);
                deleted = ps.executeUpdate();
            }
            Map<HistoryCounts.Key, Long> removed = new HashMap<>();
            for (long id : ids) {
                Object[] row = finished.get(id);
                HistoryCounts.add(removed, (String) row[0], (TaskStatus) row[1], (java.time.Instant) row[2]);
            }
            history.subtract(c, removed);
        }
        if (!gone.isEmpty()) {
            try (PreparedStatement ps =
                    c.prepareStatement("DELETE FROM dbtasks_workflow WHERE id IN (" + marks(gone.size()) + ")")) {
                bind(ps, gone);
                ps.executeUpdate();
            }
        }
        return deleted;
    }

    /**
     * Deletes whole chunked batches (the chunk tasks with their attempts and idempotency keys, the
     * chunk rows, the batch row) every chunk task of which is finished and older than the retention of
     * its state in its queue, in groups of {@value Retention#BATCH} batches, each its own
     * transaction. A batch with one chunk still unfinished or too recent stays whole, so its progress
     * counts only what happened. A chunk row whose task is gone (deleted alone by an earlier version)
     * counts as old. The chunk tasks are locked and checked again in the deleting transaction, so a
     * chunk retried in between keeps its batch.
     *
     * @return chunk tasks deleted
     */
    long deleteBatches() {
        OldCondition cond = oldCondition();
        if (cond == null) {
            return 0;
        }
        String candidates = "SELECT b.id, b.chunks FROM dbtasks_batch b WHERE b.id > ? AND NOT EXISTS"
                + " (SELECT 1 FROM dbtasks_batch_chunk ch JOIN dbtasks_task t ON t.id = ch.task_id"
                + " WHERE ch.batch_id = b.id AND " + cond.isOld() + " = 0) ORDER BY b.id LIMIT ?";
        long total = 0;
        long after = Long.MIN_VALUE;
        while (true) {
            long from = after;
            List<long[]> found = jdbc.withConnection("Find finished batches", c -> {
                List<long[]> rows = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement(candidates)) {
                    int i = 1;
                    ps.setLong(i++, from);
                    i = bindAll(ps, i, cond.ages());
                    ps.setInt(i, Retention.BATCH);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            rows.add(new long[] {rs.getLong(1), rs.getLong(2)});
                        }
                    }
                }
                return rows;
            });
            if (found.isEmpty()) {
                return total;
            }
            // One transaction takes whole batches up to about Retention.BATCH chunk tasks (at least
            // one batch, however many chunks it has), so a group of large batches is not one huge
            // transaction.
            List<Long> batches = new ArrayList<>();
            long chunks = 0;
            for (long[] b : found) {
                if (!batches.isEmpty() && chunks + b[1] > Retention.BATCH) {
                    break;
                }
                batches.add(b[0]);
                chunks += b[1];
            }
            after = batches.get(batches.size() - 1);
            long batchStart = System.nanoTime();
            total += Jdbc.retryingDeadlocks(() ->
                    jdbc.inTransaction("Retention of finished batches", c -> deleteWholeBatches(c, batches, cond)));
            if (found.size() < Retention.BATCH && batches.size() == found.size()) {
                return total;
            }
            pause(System.nanoTime() - batchStart);
        }
    }

    /** Locks the chunk tasks of {@code batches}, and deletes each batch all of whose chunk tasks are old. */
    private int deleteWholeBatches(Connection c, List<Long> batches, OldCondition cond) throws java.sql.SQLException {
        String inBatches = marks(batches.size());
        Map<Long, Long> batchOf = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT ch.batch_id, ch.task_id FROM dbtasks_batch_chunk ch"
                + " WHERE ch.batch_id IN (" + inBatches + ") ORDER BY ch.batch_id, ch.chunk" + dialect.forUpdate())) {
            bind(ps, batches);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    batchOf.put(rs.getLong(2), rs.getLong(1));
                }
            }
        }
        java.util.Set<Long> keep = new java.util.HashSet<>();
        Map<Long, Object[]> finished = new HashMap<>();
        List<Long> taskIds = new ArrayList<>(new java.util.TreeSet<>(batchOf.keySet()));
        for (List<Long> slice : slices(taskIds)) {
            try (PreparedStatement ps = c.prepareStatement("SELECT t.id, " + cond.isOld()
                    + " AS is_old, t.queue, t.status, t.finished_at FROM dbtasks_task t WHERE t.id IN ("
                    + marks(slice.size()) + ") ORDER BY t.id" + dialect.forUpdate())) {
                int i = bindAll(ps, 1, cond.ages());
                for (long id : slice) {
                    ps.setLong(i++, id);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        long id = rs.getLong(1);
                        if (rs.getInt(2) == 0) {
                            keep.add(batchOf.get(id));
                        }
                        finished.put(id, new Object[] {
                            rs.getString(3), TaskStatus.valueOf(rs.getString(4)), dialect.getInstant(rs, "finished_at")
                        });
                    }
                }
            }
        }
        List<Long> gone = new ArrayList<>();
        for (long b : batches) {
            if (!keep.contains(b)) {
                gone.add(b);
            }
        }
        if (gone.isEmpty()) {
            return 0;
        }
        // Only the tasks that still exist are deleted; chunk rows whose task is gone just leave.
        List<Long> ids = new ArrayList<>();
        for (long id : taskIds) {
            if (finished.containsKey(id) && !keep.contains(batchOf.get(id))) {
                ids.add(id);
            }
        }
        int deleted = 0;
        Map<HistoryCounts.Key, Long> removed = new HashMap<>();
        for (List<Long> slice : slices(ids)) {
            String in = marks(slice.size());
            try (PreparedStatement ps =
                    c.prepareStatement("DELETE FROM dbtasks_attempt WHERE task_id IN (" + in + ")")) {
                bind(ps, slice);
                ps.executeUpdate();
            }
            TaskKeys.deleteOf(c, slice);
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_task WHERE id IN (" + in + ")")) {
                bind(ps, slice);
                deleted += ps.executeUpdate();
            }
            for (long id : slice) {
                Object[] row = finished.get(id);
                HistoryCounts.add(removed, (String) row[0], (TaskStatus) row[1], (java.time.Instant) row[2]);
            }
        }
        // The rows are locked: every one selected is deleted, and leaves its hour's count.
        if (deleted != ids.size()) {
            throw new IllegalStateException(
                    "retention deleted " + deleted + " of " + ids.size() + " chunk tasks it had locked");
        }
        history.subtract(c, removed);
        String inGone = marks(gone.size());
        try (PreparedStatement ps =
                c.prepareStatement("DELETE FROM dbtasks_batch_chunk WHERE batch_id IN (" + inGone + ")")) {
            bind(ps, gone);
            ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_batch WHERE id IN (" + inGone + ")")) {
            bind(ps, gone);
            ps.executeUpdate();
        }
        return deleted;
    }

    /** @return {@code ids} in consecutive slices of at most {@value Retention#BATCH}, so no statement binds too many */
    private static List<List<Long>> slices(List<Long> ids) {
        List<List<Long>> slices = new ArrayList<>();
        for (int i = 0; i < ids.size(); i += Retention.BATCH) {
            slices.add(ids.subList(i, Math.min(ids.size(), i + Retention.BATCH)));
        }
        return slices;
    }

    private static String marks(int n) {
        return String.join(", ", Collections.nCopies(n, "?"));
    }

    /**
     * @return the condition, led by {@code AND}, that {@code column} is {@code only} (if not null)
     *     and none of {@code except}; empty if neither restricts. Its parameters are {@code only} or
     *     {@code except}, in order.
     */
    private static String queueClause(String column, String only, List<String> except) {
        if (only != null) {
            return " AND " + column + " = ?";
        }
        return except.isEmpty() ? "" : " AND " + column + " NOT IN (" + marks(except.size()) + ")";
    }

    /** Binds {@code values} (queue names and millisecond offsets) from {@code first}; @return the next index. */
    private static int bindAll(PreparedStatement ps, int first, List<Object> values) throws java.sql.SQLException {
        int i = first;
        for (Object v : values) {
            if (v instanceof String text) {
                ps.setString(i++, text);
            } else {
                ps.setLong(i++, (Long) v);
            }
        }
        return i;
    }

    /**
     * Deletes tasks of a finished {@code status} that finished more than {@code age} ago, of queue
     * {@code only} if it is not null, else of every queue but those in {@code except}.
     *
     * <p>Rows that match the state and age but not the queues (another queue's: a queue kept longer,
     * or beside a queue kept shorter, every other queue) stay in the index range the sweep reads. So
     * that no sweep reads them again and again, the batches read in order of {@code finished_at}, each
     * from where the last ended, and where queues are filtered a sweep that read to its cutoff leaves
     * a mark for the next: {@link #REREAD} before that cutoff. A later sweep reads from the mark; rows
     * finish at the database's now, after any mark, and the margin covers the clocks of a cluster's
     * nodes and a settle that commits late. The engine's first sweep, and one every {@link
     * #FULL_SCAN_EVERY}, read from the oldest row, so a row a sweep skipped because another
     * transaction held it, or one whose finish was set back by hand, is deleted by then.
     */
    long deleteTasks(TaskStatus status, Duration age, String only, List<String> except) {
        if (status != TaskStatus.SUCCEEDED && status != TaskStatus.FAILED && status != TaskStatus.CANCELLED) {
            throw new IllegalArgumentException("only finished tasks are deleted, not " + status);
        }
        // The status is inlined (an enum constant, not input), so PostgreSQL matches the partial index;
        // queue names are bound. Workflow steps go only with their whole workflow (deleteWorkflows), chunk
        // tasks only with their whole batch (deleteBatches).
        String head = "SELECT id, queue, finished_at FROM dbtasks_task WHERE status = '" + status.name()
                + "' AND finished_at < ?";
        String tail = queueClause("queue", only, except)
                + " AND workflow_id IS NULL AND NOT EXISTS (SELECT 1 FROM dbtasks_batch_chunk ch"
                + " WHERE ch.task_id = dbtasks_task.id) ORDER BY finished_at LIMIT ?" + dialect.forUpdateSkipLocked();
        String fromOldest = head + tail;
        String fromMark = head + " AND finished_at >= ?" + tail;
        List<Object> queues = only != null ? List.of(only) : List.copyOf(except);
        String what = only != null ? status + " tasks of queue " + only : status + " tasks";
        String scope = status + " " + (only != null ? "only " + only : "except " + except);
        long scanStart = System.nanoTime();
        // Without a queue filter, the rows past the age are the ones deleted: what a sweep reads from
        // the oldest row again is the few it leaves (workflow steps, chunk tasks), so it keeps no mark.
        boolean stepsOverQueues = only != null || !except.isEmpty();
        Mark mark = stepsOverQueues ? marks.get(scope) : null;
        boolean full = mark == null || scanStart - mark.fullScanNanos() > FULL_SCAN_EVERY.toNanos();
        Instant cutoff = jdbc.withConnection("Retention of " + what, c -> clock.nowPlus(c, -age.toMillis()));
        Instant from = full ? null : mark.from();
        long total = 0;
        int found;
        do {
            long batchStart = System.nanoTime();
            Instant readFrom = from;
            Batch batch = Jdbc.retryingDeadlocks(() -> jdbc.inTransaction("Retention of " + what, c -> {
                dialect.readCommittedTransaction(c);
                List<Long> ids = new ArrayList<>(Retention.BATCH);
                Map<HistoryCounts.Key, Long> removed = new HashMap<>();
                Instant last = null;
                try (PreparedStatement ps = c.prepareStatement(readFrom == null ? fromOldest : fromMark)) {
                    int i = 1;
                    dialect.setInstant(ps, i++, cutoff);
                    if (readFrom != null) {
                        dialect.setInstant(ps, i++, readFrom);
                    }
                    ps.setInt(bindAll(ps, i, queues), Retention.BATCH);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            ids.add(rs.getLong(1));
                            last = dialect.getInstant(rs, "finished_at");
                            HistoryCounts.add(removed, rs.getString(2), status, last);
                        }
                    }
                }
                if (ids.isEmpty()) {
                    return new Batch(0, null);
                }
                String in = String.join(", ", Collections.nCopies(ids.size(), "?"));
                try (PreparedStatement ps =
                        c.prepareStatement("DELETE FROM dbtasks_attempt WHERE task_id IN (" + in + ")")) {
                    bind(ps, ids);
                    ps.executeUpdate();
                }
                int deleted;
                TaskKeys.deleteOf(c, ids);
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_task WHERE id IN (" + in + ")")) {
                    bind(ps, ids);
                    deleted = ps.executeUpdate();
                }
                // The rows are locked: every one selected is deleted, and leaves its hour's count.
                if (deleted != ids.size()) {
                    throw new IllegalStateException(
                            "retention deleted " + deleted + " of " + ids.size() + " tasks it had locked");
                }
                history.subtract(c, removed);
                return new Batch(deleted, last);
            }));
            found = batch.deleted();
            total += found;
            if (found == Retention.BATCH) {
                from = batch.last(); // read in finished_at order: what is left is at or after it
                pause(System.nanoTime() - batchStart);
            }
        } while (found == Retention.BATCH);
        // A sweep through the API may run beside the scheduled one: keep the later of two marks, each
        // left by a pass that read up to it.
        if (stepsOverQueues) {
            marks.merge(scope, new Mark(cutoff.minus(REREAD), full ? scanStart : mark.fullScanNanos()), Mark::later);
        }
        return total;
    }

    /**
     * Deletes the logged starts of rate-limited keys that have left every window ({@code expires_at}
     * is at least the start plus the window in force when it was logged). Claims prune the starts of
     * the keys they visit; this deletes those of keys no claim visits any more.
     *
     * @return how many rows were deleted
     */
    int deleteExpiredStarts() {
        return jdbc.withConnection("Retention of expired rate-limit starts", c -> {
            try (PreparedStatement ps =
                    c.prepareStatement("DELETE FROM dbtasks_rate_start WHERE expires_at < " + dialect.now())) {
                return ps.executeUpdate();
            }
        });
    }

    /**
     * Deletes the rows of concurrency keys with no PENDING or RUNNING task, in batches; rows another
     * transaction holds (a claim of the key) are skipped. A task of the key enqueued meanwhile is
     * safe: no claim starts it without the key's lock, the row that the claim creates again or, on
     * PostgreSQL, an advisory lock.
     *
     * @return how many rows were deleted
     */
    int deleteIdleKeys() {
        // Each state read apart, through an index that holds it (see Dialect.liveOfKeys).
        String idle = notLive(TaskStatus.PENDING) + " AND" + notLive(TaskStatus.RUNNING);
        String select = "SELECT k.queue, k.concurrency_key FROM dbtasks_concurrency_key k WHERE" + idle + " LIMIT ?"
                + dialect.forUpdateSkipLocked();
        String delete = "DELETE FROM dbtasks_concurrency_key WHERE queue = ? AND concurrency_key = ?";
        int total = 0;
        int found;
        do {
            int[] batch = Jdbc.retryingDeadlocks(() -> jdbc.inTransaction("Retention of idle concurrency keys", c -> {
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
            }));
            found = batch[0];
            total += batch[1];
        } while (found == Retention.BATCH);
        return total;
    }

    /**
     * @return a condition on {@code k}, a row of {@code dbtasks_concurrency_key}: its key has no live
     *     task in {@code state}
     */
    private static String notLive(TaskStatus state) {
        return " NOT EXISTS (SELECT 1 FROM dbtasks_task t WHERE " + Dialect.LIVE + " AND t.status = "
                + Dialect.status(state) + " AND t.queue = k.queue AND t.concurrency_key = k.concurrency_key)";
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
