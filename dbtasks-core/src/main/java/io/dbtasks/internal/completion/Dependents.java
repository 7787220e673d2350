package io.dbtasks.internal.completion;

import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * What a workflow step's end does to the steps that wait for it, in the transaction that ends it:
 * the one settle operation ({@link Completions#settle}), the rescue of an expired lease ({@code
 * Leases}) and an operator's cancel or retry ({@code TaskOperations}) call it on their own
 * connection, so a dependent is released, cancelled or revived exactly when its dependency's end
 * commits, with no poller scanning waiting steps.
 *
 * <p>A WAITING step holds in {@code waiting_for} how many of its dependencies are not yet satisfied.
 * A dependency that SUCCEEDED satisfies its edges; one that FAILED or was CANCELLED satisfies the
 * edges whose {@code on_failure} is RUN or RUN_IF_ANY_FAILED, and cancels the dependents whose
 * edge is CANCEL (their {@code blocked_by} naming it, their {@code last_error} the reason), which in
 * turn ends their own dependents. A step with RUN_IF_ANY_FAILED edges is released only if one of
 * those dependencies did not succeed, and cancelled otherwise. A step whose counter reaches 0 while WAITING moves to PENDING, due at once (or at its
 * own later {@code run_at}). A step revived from CANCELLED leaves its hour's count of finished tasks
 * in the same transaction ({@link HistoryCounts#subtract}). The dependents' rows are locked by key in id order before they are
 * changed, so concurrent settles of two dependencies of one step count down one after the other.
 *
 * <p>Thread-safe: no state besides its collaborators.
 */
public final class Dependents {
    /** How a dependency's failure or cancellation reaches a dependent through one edge. */
    static final String CANCEL = "CANCEL";

    static final String RUN = "RUN";

    static final String RUN_IF_ANY_FAILED = "RUN_IF_ANY_FAILED";

    private static final int MAX_REASON = 4000;

    private final Dialect dialect;
    private final TaskUpdate countDown;
    private final TaskUpdate release;
    private final TaskUpdate cancel;
    private final TaskUpdate revive;
    /** A revived step that another failed dependency still cancels: it names that one. */
    private final TaskUpdate reblock;

    private final TaskUpdate countUp;
    /** A step that runs only on a failure, all of whose dependencies succeeded. */
    private final TaskUpdate skipped;

    private final Consumer<String> wake;
    private final HistoryCounts history;

    /**
     * @param dialect the database's dialect
     * @param wake wakes a local worker of a queue that got a claimable task
     */
    public Dependents(Dialect dialect, Consumer<String> wake) {
        this.dialect = dialect;
        this.wake = wake;
        this.history = new HistoryCounts(dialect);
        TaskUpdate update = new TaskUpdate(dialect);
        this.countDown = update.set("waiting_for = ?").and("id = ?");
        this.release = update.to(TaskStatus.PENDING)
                .set("waiting_for = 0, run_at = GREATEST(run_at, " + dialect.now() + ")")
                .whereIn(TaskStatus.WAITING)
                .and("id = ?");
        this.cancel = update.to(TaskStatus.CANCELLED)
                .set("waiting_for = ?, blocked_by = ?, last_error = ?")
                .whereIn(TaskStatus.WAITING)
                .and("id = ?");
        this.skipped = update.to(TaskStatus.CANCELLED)
                .set("waiting_for = 0, last_error = ?")
                .whereIn(TaskStatus.WAITING)
                .and("id = ?");
        this.revive = update.to(TaskStatus.WAITING)
                .set("blocked_by = NULL, last_error = NULL")
                .whereIn(TaskStatus.CANCELLED)
                .and("id = ? AND blocked_by = ?");
        this.reblock = update.set("blocked_by = ?, last_error = ?")
                .whereIn(TaskStatus.CANCELLED)
                .and("id = ? AND blocked_by = ?");
        this.countUp = update.set("waiting_for = waiting_for + 1").and("id = ?");
    }

    /** One dependency edge as read: {@code taskId} waits for {@code dependsOn}. */
    private record Edge(long taskId, long dependsOn, String onFailure) {}

    /** A dependent's row as locked. */
    private record Waiter(long id, String queue, TaskStatus status, int waitingFor, java.time.Instant finishedAt) {}

    /**
     * Applies the end of steps to their dependents, on {@code c}, in its transaction.
     *
     * @param c the transaction that ended them
     * @param ended each ended step's id and its final state (SUCCEEDED, FAILED or CANCELLED); other
     *     states are ignored
     * @param released gets the queues of the steps made PENDING, for {@link #wake} once {@code c}
     *     has committed (a local worker woken before would find nothing)
     * @throws SQLException if the database fails
     */
    public void ended(Connection c, Map<Long, TaskStatus> ended, Set<String> released) throws SQLException {
        Map<Long, TaskStatus> round = new TreeMap<>();
        ended.forEach((id, status) -> {
            if (status.isFinal()) {
                round.put(id, status);
            }
        });
        Set<String> queues = new LinkedHashSet<>();
        while (!round.isEmpty()) {
            List<Edge> edges = edgesFrom(c, round.keySet());
            if (edges.isEmpty()) {
                break;
            }
            Map<Long, String> reasons = failureReasons(c, round);
            Set<Long> dependents = new TreeSet<>();
            edges.forEach(e -> dependents.add(e.taskId()));
            Map<Long, Waiter> waiters = lock(c, dependents);
            // Per dependent: how many of its edges this round satisfies, and the first edge that
            // cancels it. An edge counts once: a dependency that failed, was counted by a RUN edge
            // and then retried and succeeded finds its edge satisfied already.
            Map<Long, Integer> satisfied = new TreeMap<>();
            Map<Long, Edge> cancelling = new HashMap<>();
            for (Edge e : edges) {
                TaskStatus status = round.get(e.dependsOn());
                satisfied.putIfAbsent(e.taskId(), 0);
                if (status == TaskStatus.SUCCEEDED || !CANCEL.equals(e.onFailure())) {
                    if (waiters.containsKey(e.taskId()) && flip(c, e, true)) {
                        satisfied.merge(e.taskId(), 1, Integer::sum);
                    }
                } else {
                    cancelling.putIfAbsent(e.taskId(), e);
                }
            }
            Map<Long, TaskStatus> next = new TreeMap<>();
            for (Map.Entry<Long, Integer> d : satisfied.entrySet()) {
                Waiter w = waiters.get(d.getKey());
                if (w == null) {
                    continue; // deleted
                }
                int left = w.waitingFor() - d.getValue();
                Edge blocking = cancelling.get(w.id());
                if (blocking != null && w.status() == TaskStatus.WAITING) {
                    String reason = "Dependency " + reasons.get(blocking.dependsOn());
                    if (TaskUpdate.checked(
                            cancel.run(c, left, blocking.dependsOn(), clip(reason), w.id()),
                            "cancel of dependent " + w.id())) {
                        next.put(w.id(), TaskStatus.CANCELLED);
                    }
                } else if (left <= 0 && w.status() == TaskStatus.WAITING) {
                    String skip = noFailureToRunOn(c, w.id());
                    if (skip != null) {
                        if (TaskUpdate.checked(skipped.run(c, skip, w.id()), "cancel of " + w.id())) {
                            next.put(w.id(), TaskStatus.CANCELLED);
                        }
                    } else if (TaskUpdate.checked(release.run(c, w.id()), "release of dependent " + w.id())) {
                        queues.add(w.queue());
                    }
                } else if (d.getValue() > 0) {
                    // Counted down while it waits for more, or while it is cancelled by another
                    // dependency (so a retry of that one finds the count right).
                    countDown.run(c, left, w.id());
                }
            }
            round.clear();
            round.putAll(next);
        }
        signal(c, queues, released);
    }

    /**
     * Revives what the end of {@code id} cancelled, now that it runs again: each CANCELLED step whose
     * {@code blocked_by} is {@code id} goes back to WAITING (PENDING at once if nothing else is left
     * to wait for), unless another dependency on a cancelling edge is still FAILED or CANCELLED: then
     * it stays CANCELLED, {@code blocked_by} naming that one, so its retry revives it. The steps that
     * had counted the end of {@code id} (or of a revived step) on a RUN or RUN_IF_ANY_FAILED edge and
     * have not started wait for it again. And so on down the graph.
     *
     * @param c the transaction that sends {@code id} back to PENDING
     * @param id the retried step
     * @param released gets the queues of the steps made PENDING, for {@link #wake} after the commit
     * @throws SQLException if the database fails
     */
    public void retried(Connection c, long id, Set<String> released) throws SQLException {
        List<Long> round = List.of(id);
        Set<String> queues = new LinkedHashSet<>();
        while (!round.isEmpty()) {
            List<Long> next = new ArrayList<>();
            for (long blocker : round) {
                waitAgain(c, blocker);
                List<Long> blocked = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement("SELECT d.task_id FROM dbtasks_dependency d"
                        + " JOIN dbtasks_task t ON t.id = d.task_id WHERE d.depends_on = ? AND t.blocked_by = ?"
                        + " AND " + TaskUpdate.is("t.status", TaskStatus.CANCELLED) + " ORDER BY d.task_id")) {
                    ps.setLong(1, blocker);
                    ps.setLong(2, blocker);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            blocked.add(rs.getLong(1));
                        }
                    }
                }
                if (blocked.isEmpty()) {
                    continue;
                }
                Map<Long, Waiter> waiters = lock(c, blocked);
                for (long dependent : blocked) {
                    Waiter w = waiters.get(dependent);
                    if (w == null) {
                        continue;
                    }
                    Long other = otherFailure(c, dependent, blocker);
                    if (other != null) {
                        String reason = "Dependency "
                                + failureReasons(c, Map.of(other, TaskStatus.FAILED))
                                        .get(other);
                        reblock.run(c, other, clip(reason), dependent, blocker);
                        continue;
                    }
                    if (!TaskUpdate.checked(revive.run(c, dependent, blocker), "revival of " + dependent)) {
                        continue;
                    }
                    Map<HistoryCounts.Key, Long> revived = new HashMap<>();
                    HistoryCounts.add(revived, w.queue(), w.status(), w.finishedAt());
                    history.subtract(c, revived);
                    if (w.waitingFor() <= 0
                            && TaskUpdate.checked(release.run(c, dependent), "release of " + dependent)) {
                        queues.add(w.queue());
                    }
                    next.add(dependent);
                }
            }
            round = next;
        }
        signal(c, queues, released);
    }

    /**
     * Makes the dependents that counted the end of {@code id} on a satisfied edge and have not
     * started (WAITING, or CANCELLED by another dependency) wait for it again: the edge is
     * unsatisfied and their counter goes back up, so {@code id}'s next end counts once.
     */
    private void waitAgain(Connection c, long id) throws SQLException {
        List<Long> counted = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT task_id FROM dbtasks_dependency WHERE depends_on = ? AND satisfied = TRUE ORDER BY task_id")) {
            ps.setLong(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    counted.add(rs.getLong(1));
                }
            }
        }
        if (counted.isEmpty()) {
            return;
        }
        Map<Long, Waiter> waiters = lock(c, counted);
        for (long dependent : counted) {
            Waiter w = waiters.get(dependent);
            if (w != null
                    && (w.status() == TaskStatus.WAITING || w.status() == TaskStatus.CANCELLED)
                    && flip(c, new Edge(dependent, id, RUN), false)) {
                countUp.run(c, dependent);
            }
        }
    }

    /** Sets an edge's {@code satisfied} flag; @return whether this call changed it. */
    private static boolean flip(Connection c, Edge e, boolean to) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE dbtasks_dependency SET satisfied = ?"
                + " WHERE depends_on = ? AND task_id = ? AND satisfied = ?")) {
            ps.setBoolean(1, to);
            ps.setLong(2, e.dependsOn());
            ps.setLong(3, e.taskId());
            ps.setBoolean(4, !to);
            return ps.executeUpdate() == 1;
        }
    }

    /**
     * @return another dependency of {@code id} than {@code except}, on a cancelling edge, that is
     *     FAILED or CANCELLED (the lowest id), read as last committed; else {@code null}
     */
    private Long otherFailure(Connection c, long id, long except) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT t.id FROM dbtasks_dependency d"
                + " JOIN dbtasks_task t ON t.id = d.depends_on WHERE d.task_id = ? AND d.depends_on <> ?"
                + " AND d.on_failure = ? AND t.status IN (?, ?) ORDER BY t.id" + dialect.latestCommittedRead())) {
            ps.setLong(1, id);
            ps.setLong(2, except);
            ps.setString(3, CANCEL);
            ps.setString(4, TaskStatus.FAILED.name());
            ps.setString(5, TaskStatus.CANCELLED.name());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : null;
            }
        }
    }

    /**
     * @return for a step with {@link #RUN_IF_ANY_FAILED} edges none of whose dependencies failed, the
     *     reason it is cancelled; else {@code null}: it runs. The dependencies' states are read as last
     *     committed (under MariaDB's REPEATABLE READ a plain read would see the transaction's snapshot,
     *     from before a concurrent settle of another dependency committed).
     */
    private String noFailureToRunOn(Connection c, long id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT t.status FROM dbtasks_dependency d"
                + " JOIN dbtasks_task t ON t.id = d.depends_on WHERE d.task_id = ? AND d.on_failure = ?"
                + dialect.latestCommittedRead())) {
            ps.setLong(1, id);
            ps.setString(2, RUN_IF_ANY_FAILED);
            long edges = 0;
            long failed = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    edges++;
                    if (!TaskStatus.SUCCEEDED.name().equals(rs.getString(1))) {
                        failed++;
                    }
                }
            }
            return edges > 0 && failed == 0
                    ? "Every dependency it runs on the failure of succeeded; it runs only if one fails"
                    : null;
        }
    }

    /** Notifies other instances (with the commit, where the database can) and collects the queues. */
    private void signal(Connection c, Set<String> queues, Set<String> released) throws SQLException {
        if (!queues.isEmpty()) {
            dialect.notifyEnqueued(c, queues);
            released.addAll(queues);
        }
    }

    /**
     * Wakes this engine's workers of {@code queues}; call once the transaction that released their
     * steps has committed.
     *
     * @param queues the queues collected by {@link #ended} or {@link #retried}
     */
    public void wake(Set<String> queues) {
        queues.forEach(wake);
    }

    private static List<Edge> edgesFrom(Connection c, Collection<Long> ids) throws SQLException {
        List<Edge> edges = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT task_id, depends_on, on_failure FROM dbtasks_dependency"
                + " WHERE depends_on IN (" + marks(ids.size()) + ")")) {
            bind(ps, ids);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    edges.add(new Edge(rs.getLong(1), rs.getLong(2), rs.getString(3)));
                }
            }
        }
        return edges;
    }

    /** @return for each failed or cancelled step of {@code round}, the text a dependent's cancel gives */
    private static Map<Long, String> failureReasons(Connection c, Map<Long, TaskStatus> round) throws SQLException {
        List<Long> failed = new ArrayList<>();
        round.forEach((id, status) -> {
            if (status != TaskStatus.SUCCEEDED) {
                failed.add(id);
            }
        });
        Map<Long, String> reasons = new LinkedHashMap<>();
        if (failed.isEmpty()) {
            return reasons;
        }
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT id, step, status, last_error FROM dbtasks_task WHERE id IN (" + marks(failed.size()) + ")")) {
            bind(ps, failed);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String step = rs.getString(2);
                    String error = rs.getString(4);
                    reasons.put(
                            rs.getLong(1),
                            (step == null ? "task " + rs.getLong(1) : "'" + step + "' (task " + rs.getLong(1) + ")")
                                    + " is " + rs.getString(3)
                                    + (error == null ? "" : ": " + error));
                }
            }
        }
        return reasons;
    }

    /** Locks the rows of {@code ids} by key, in id order, and reads what the counting needs. */
    private Map<Long, Waiter> lock(Connection c, Collection<Long> ids) throws SQLException {
        List<Long> sorted = new ArrayList<>(ids);
        Collections.sort(sorted);
        Map<Long, Waiter> rows = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT id, queue, status, waiting_for, finished_at FROM "
                + dialect.taskTableByKey() + " WHERE id IN (" + marks(sorted.size()) + ") ORDER BY id"
                + dialect.forUpdate())) {
            bind(ps, sorted);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.put(
                            rs.getLong(1),
                            new Waiter(
                                    rs.getLong(1),
                                    rs.getString(2),
                                    TaskStatus.valueOf(rs.getString(3)),
                                    rs.getInt(4),
                                    dialect.getInstant(rs, "finished_at")));
                }
            }
        }
        return rows;
    }

    private static String marks(int n) {
        return String.join(", ", Collections.nCopies(n, "?"));
    }

    private static void bind(PreparedStatement ps, Collection<Long> ids) throws SQLException {
        int i = 1;
        for (long id : ids) {
            ps.setLong(i++, id);
        }
    }

    /** Keeps a reason short: the dependency's own error is on its row in full. */
    private static String clip(String s) {
        return s.length() <= MAX_REASON ? s : s.substring(0, MAX_REASON);
    }
}
