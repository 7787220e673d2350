package io.dbtasks.internal.lease;

import io.dbtasks.AttemptOutcome;
import io.dbtasks.Task;
import io.dbtasks.TaskStatus;
import io.dbtasks.event.TaskEvent;
import io.dbtasks.internal.completion.Attempts;
import io.dbtasks.internal.completion.Dependents;
import io.dbtasks.internal.completion.TaskUpdate;
import io.dbtasks.internal.dialect.Claimable;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.limit.LimitSet;
import io.dbtasks.internal.limit.RateWindow;
import io.dbtasks.internal.query.TaskRows;
import io.dbtasks.internal.support.EngineConfig;
import io.dbtasks.internal.support.Events;
import io.dbtasks.internal.support.Jdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease protocol.
 *
 * <p>A claim moves due PENDING tasks to RUNNING in one statement, giving each a new fencing token
 * from the database sequence and a lease that ends {@code lease} after the database's now. The
 * holder renews it by heartbeat: a {@link TaskUpdate} guarded by the lease ({@code id AND
 * lease_token AND RUNNING}); 0 rows means the lease is gone (rescued and re-claimed, retried, handed back) and the
 * holder must stop. Rescue finds RUNNING tasks whose lease ended by the database clock and, with
 * one guarded UPDATE per task that re-checks expiry, token and the cancel flag it read, sends each
 * back to PENDING (FAILED when it has no attempts left, CANCELLED when an operator asked to cancel
 * it) and records a LEASE_EXPIRED attempt in the same transaction. The old holder's token no longer
 * matches, so nothing it writes afterwards lands.
 */
public final class Leases {
    private static final Logger log = LoggerFactory.getLogger(Leases.class);
    private static final int RESCUE_BATCH = 100;

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final TaskRows rows;
    private final Attempts attempts;
    private final EngineConfig config;
    private final Events events;
    private final TaskUpdate update;
    private final Dependents dependents;
    /** Binds: lease millis, id, token. */
    private final TaskUpdate renew;
    /** The limits of a queue, read at each claim. */
    private final java.util.function.Function<String, LimitSet> limits;

    private final KeyedClaim keyedClaim;
    /** The rate decisions of keyed claims, and when a key held back by its rate frees. */
    private final RateWindow rates;

    /** What this engine can run, read at each claim. */
    private final java.util.function.Supplier<Claimable> claimable;

    /** Leases that claim tasks of any kind, in queues without limits. */
    public Leases(Jdbc jdbc, Dialect dialect, Attempts attempts, EngineConfig config, Events events) {
        this(
                jdbc,
                dialect,
                attempts,
                config,
                events,
                () -> Claimable.ANY,
                queue -> LimitSet.NONE,
                new Dependents(dialect, queue -> {}));
    }

    /**
     * @param claimable what this engine can run, read at each claim; a claim takes nothing else
     * @param limits the limits of a queue, read at each claim; a queue with any, or set fair, claims
     *     within them, in claim order or round robin over keys (see {@link KeyedClaim})
     * @param dependents what a workflow step's end does to its dependents
     */
    public Leases(
            Jdbc jdbc,
            Dialect dialect,
            Attempts attempts,
            EngineConfig config,
            Events events,
            java.util.function.Supplier<Claimable> claimable,
            java.util.function.Function<String, LimitSet> limits,
            Dependents dependents) {
        this.claimable = claimable;
        this.limits = limits;
        this.rates = new RateWindow(dialect);
        this.keyedClaim = new KeyedClaim(dialect, rates);
        this.dependents = dependents;
        this.events = events;
        this.update = new TaskUpdate(dialect);
        this.renew = update.set("lease_expires_at = " + dialect.nowPlusMillis() + ", heartbeat_at = " + dialect.now())
                .held()
                .renewal();
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.rows = new TaskRows(dialect);
        this.attempts = attempts;
        this.config = config;
    }

    /**
     * Claims up to {@code limit} due tasks of {@code queue} that this engine can run (see {@link
     * Claimable}); see the class comment. A claim the database rolled back (SQLState class 40) runs
     * again, up to {@link Jdbc#DEADLOCK_ATTEMPTS} times in all.
     */
    public List<TaskRows.Claimed> claim(String queue, int limit) {
        Claimable what = claimable.get();
        if (what.nothing()) {
            return List.of();
        }
        LimitSet queueLimits = limits.apply(queue);
        if (!queueLimits.fair()) {
            heldBack.remove(queue);
        }
        List<TaskRows.Claimed> claimed;
        if (!queueLimits.fair()) {
            // A claim rolled back as a deadlock victim or a Galera certification failure committed
            // nothing: it runs again at once, rather than a poll interval later.
            claimed = Jdbc.retryingDeadlocks(() -> jdbc.withConnection(
                    "Claim from queue " + queue,
                    c -> dialect.claim(
                            c,
                            queue,
                            what,
                            limit,
                            config.workerId(),
                            config.lease().toMillis(),
                            rows::claimed)));
            claimed = inClaimOrder(claimed);
        } else if (queueLimits.inOrder() && !binding.contains(queue)) {
            KeyedClaim.Result<TaskRows.Claimed> first = Jdbc.retryingDeadlocks(() -> jdbc.withConnection(
                    "Claim from queue " + queue + " within its limits",
                    c -> keyedClaim.claimInOrder(
                            c,
                            queue,
                            what,
                            queueLimits,
                            limit,
                            config.workerId(),
                            config.lease().toMillis(),
                            rows::claimed)));
            claimed = inClaimOrder(first.rows());
            if (first.heldBack()) {
                heldBack.add(queue);
            } else {
                heldBack.remove(queue);
            }
            if (first.headHeldBack()) {
                // A limit holds back most of the head of the queue: claims go round robin, which
                // looks past keys at their limit, until one leaves nothing behind a limit; this one
                // takes the rest that way at once. A claim that started most of what it locked stays
                // in claim order, which leaves the tasks of keys at their limit where they are.
                binding.add(queue);
                if (claimed.size() < limit) {
                    // The claim above has committed: its tasks are this engine's now, whatever the
                    // second claim does. A failure of that one is logged and the loop comes back.
                    try {
                        List<TaskRows.Claimed> rest = roundRobin(queue, what, queueLimits, limit - claimed.size());
                        claimed = new ArrayList<>(claimed);
                        claimed.addAll(rest);
                    } catch (RuntimeException e) {
                        log.warn(
                                "Claim from queue {} round robin after a claim in order failed; starting the {}"
                                        + " task(s) claimed",
                                queue,
                                claimed.size(),
                                e);
                    }
                }
            }
        } else {
            claimed = roundRobin(queue, what, queueLimits, limit);
        }
        for (TaskRows.Claimed c : claimed) {
            events.task(TaskEvent.Type.CLAIMED, c.task(), null);
        }
        return claimed;
    }

    /**
     * Queues with limits whose claims go round robin though they may go in order ({@link
     * LimitSet#inOrder()}): a claim in order left more of the due tasks it locked behind a limit than
     * it started, and no round robin claim since has left nothing behind a limit.
     */
    private final Set<String> binding = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private List<TaskRows.Claimed> roundRobin(String queue, Claimable what, LimitSet queueLimits, int limit) {
        KeyedClaim.Result<TaskRows.Claimed> result = Jdbc.retryingDeadlocks(() -> jdbc.withConnection(
                "Claim from queue " + queue + " within its limits, fair across keys",
                c -> keyedClaim.claim(
                        c,
                        queue,
                        what,
                        queueLimits,
                        limit,
                        config.workerId(),
                        config.lease().toMillis(),
                        rows::claimed)));
        if (!result.heldBack()) {
            binding.remove(queue);
        }
        return keyed(queue, result);
    }

    /** Claim order: priority first, then run time, then enqueue order. */
    private static final java.util.Comparator<TaskRows.Claimed> CLAIM_ORDER = java.util.Comparator.comparingInt(
                    (TaskRows.Claimed c) -> c.task().priority())
            .reversed()
            .thenComparing(c -> c.task().runAt())
            .thenComparingLong(c -> c.task().id());

    /**
     * @return {@code claimed} sorted in claim order, the order the engine starts them in: the claim's
     *     update returns its rows in no particular order
     */
    private static List<TaskRows.Claimed> inClaimOrder(List<TaskRows.Claimed> claimed) {
        if (claimed.size() < 2) {
            return claimed;
        }
        List<TaskRows.Claimed> sorted = new ArrayList<>(claimed);
        sorted.sort(CLAIM_ORDER);
        return sorted;
    }

    /** Queues whose last claim left due tasks behind a limit. */
    private final Set<String> heldBack = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private List<TaskRows.Claimed> keyed(String queue, KeyedClaim.Result<TaskRows.Claimed> result) {
        if (result.heldBack()) {
            heldBack.add(queue);
        } else {
            heldBack.remove(queue);
        }
        return result.rows();
    }

    /**
     * @param queue a queue
     * @return whether this engine's last claim from it left due tasks behind a limit: a claim that
     *     came back short did not drain the queue, and one may succeed as soon as a task of a key
     *     finishes
     */
    public boolean heldBack(String queue) {
        return heldBack.contains(queue);
    }

    /**
     * @param queue a queue
     * @return -1 if this engine's last claim from it left no due task behind a limit; else how long,
     *     in milliseconds (at least 1), until a key it found at its rate frees a start, or {@link
     *     Long#MAX_VALUE} if none did (the claim loop comes back at its held-back poll)
     */
    public long heldBackMillis(String queue) {
        return heldBack.contains(queue) ? rates.millisUntilFree(queue) : -1;
    }

    /**
     * Renews each lease; returns the lease tokens whose guarded UPDATE changed 0 rows (the lease is
     * lost). Tokens, not task ids: one engine may hold a stale and a current execution of the same
     * task (rescued and re-claimed locally), and only the stale one has lost its lease. Errors
     * propagate: the caller retries at the next tick, and the lease may meanwhile expire.
     */
    public Set<Long> heartbeat(Collection<Task> tasks) {
        if (tasks.isEmpty()) {
            return Set.of();
        }
        return jdbc.withConnection("Heartbeat", c -> {
            Set<Long> lost = new HashSet<>();
            try (PreparedStatement ps = c.prepareStatement(renew.sql())) {
                for (Task t : tasks) {
                    renew.bind(ps, config.lease().toMillis(), t.id(), t.fencingToken());
                    if (!TaskUpdate.checked(ps.executeUpdate(), "heartbeat of task " + t.id())) {
                        lost.add(t.fencingToken());
                    }
                }
            }
            return lost;
        });
    }

    /**
     * @return the lease tokens among {@code tasks} that still hold their task, RUNNING, and whose
     *     cancellation an operator requested
     */
    public Set<Long> cancelRequested(Collection<Task> tasks) {
        if (tasks.isEmpty()) {
            return Set.of();
        }
        return jdbc.withConnection("Check cancellation", c -> {
            Set<Long> tokens = new HashSet<>();
            List<Task> list = new ArrayList<>(tasks);
            String in = String.join(", ", java.util.Collections.nCopies(list.size(), "?"));
            try (PreparedStatement ps = c.prepareStatement("SELECT id, lease_token FROM dbtasks_task WHERE id IN (" + in
                    + ") AND " + TaskUpdate.is("status", TaskStatus.RUNNING) + " AND cancel_requested = TRUE")) {
                for (int i = 0; i < list.size(); i++) {
                    ps.setLong(i + 1, list.get(i).id());
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        tokens.add(rs.getLong(2));
                    }
                }
            }
            return tokens;
        });
    }

    /**
     * Rescues tasks whose lease ended by the database clock.
     *
     * @return how many were rescued
     */
    public int rescueExpired() {
        // One transaction: lock the expired rows no one else holds (SKIP LOCKED), then rescue each
        // with its guarded UPDATE. A row locked by a frozen worker's open transaction is skipped and
        // tried again next round, instead of stalling every task behind it.
        // Held from before the commit until RESCUED is out: a claim that follows at once waits in line.
        Set<Long> holding = new HashSet<>();
        Set<String> released = java.util.concurrent.ConcurrentHashMap.newKeySet();
        List<Rescued> rescued;
        try {
            rescued = rescueInTransaction(holding, released);
        } catch (RuntimeException e) {
            holding.forEach(id -> events.release(id, null));
            throw e;
        }
        dependents.wake(released);
        for (Rescued r : rescued) {
            Expired e = r.task();
            log.warn("Rescued task {}: {}; now {}", e.id(), r.reason(), r.next());
            TaskEvent event = events.event(
                    TaskEvent.Type.RESCUED,
                    e.id(),
                    e.kind(),
                    e.queue(),
                    e.attempt(),
                    e.token(),
                    r.reason() + "; now " + r.next());
            if (holding.remove(e.id())) {
                events.release(e.id(), event);
            }
        }
        holding.forEach(id -> events.release(id, null));
        return rescued.size();
    }

    /** A task whose expired lease was rescued. */
    private record Expired(
            long id,
            long token,
            int attempt,
            int maxAttempts,
            String queue,
            String kind,
            String owner,
            boolean cancelRequested,
            Instant startedAt,
            Instant dbNow) {}

    /** What a rescue wrote for one task. */
    private record Rescued(Expired task, String reason, TaskStatus next) {}

    /** The rescue's transaction; adds each task it rescues to {@code holding}, held, before commit. */
    private List<Rescued> rescueInTransaction(Set<Long> holding, Set<String> released) {
        return jdbc.inTransaction("Rescue expired leases", c -> {
            dialect.readCommittedTransaction(c); // MariaDB: no gap or scan locks from the locking read
            // Candidates first, read without locks through the rescue index; then only their rows
            // are locked, by primary key and in key order, as settling locks them. A locking read
            // through the rescue index would hold other tasks' index entries while it waits for
            // rows that settling holds, and settling waits for those entries: a deadlock.
            List<Long> candidates = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT id FROM dbtasks_task WHERE "
                    + TaskUpdate.is("status", TaskStatus.RUNNING) + " AND lease_expires_at < " + dialect.now()
                    + " ORDER BY lease_expires_at LIMIT " + RESCUE_BATCH)) {
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        candidates.add(rs.getLong(1));
                    }
                }
            }
            if (candidates.isEmpty()) {
                return List.of();
            }
            java.util.Collections.sort(candidates);
            List<Expired> expired = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(TaskUpdate.lockExpired(
                    dialect,
                    "id, lease_token, attempt, max_attempts, queue, kind, lease_owner, cancel_requested, started_at, "
                            + dialect.now() + " AS db_now",
                    candidates.size()))) {
                for (int i = 0; i < candidates.size(); i++) {
                    ps.setLong(i + 1, candidates.get(i));
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        expired.add(new Expired(
                                rs.getLong("id"),
                                rs.getLong("lease_token"),
                                rs.getInt("attempt"),
                                rs.getInt("max_attempts"),
                                rs.getString("queue"),
                                rs.getString("kind"),
                                rs.getString("lease_owner"),
                                rs.getBoolean("cancel_requested"),
                                dialect.getInstant(rs, "started_at"),
                                dialect.getInstant(rs, "db_now")));
                    }
                }
            }
            List<Rescued> done = new ArrayList<>();
            java.util.Map<Long, TaskStatus> ended = new java.util.HashMap<>();
            for (Expired e : expired) {
                boolean last = e.attempt() >= e.maxAttempts();
                TaskStatus next =
                        e.cancelRequested() ? TaskStatus.CANCELLED : last ? TaskStatus.FAILED : TaskStatus.PENDING;
                String reason = "Lease of worker " + e.owner() + " (token " + e.token()
                        + ") expired during attempt " + e.attempt()
                        + (e.cancelRequested()
                                ? "; an operator had asked to cancel it, so it is not run again"
                                : last ? "; no attempts left" : "; rescued for another attempt");
                int n = rescueOne(c, e.id(), e.token(), e.cancelRequested(), next, reason);
                if (!TaskUpdate.checked(n, "rescue of task " + e.id())) {
                    continue; // renewed, completed or rescued by someone else meanwhile
                }
                long durationMs = e.startedAt() == null
                        ? 0
                        : Math.max(0, Duration.between(e.startedAt(), e.dbNow()).toMillis());
                attempts.insert(
                        c,
                        new Attempts.Row(
                                e.id(),
                                e.attempt(),
                                e.queue(),
                                e.owner(),
                                e.token(),
                                e.startedAt(),
                                durationMs,
                                AttemptOutcome.LEASE_EXPIRED,
                                null,
                                reason,
                                null));
                done.add(new Rescued(e, reason, next));
                if (next.isFinal()) {
                    ended.put(e.id(), next);
                }
                if (holding.add(e.id())) {
                    events.hold(e.id());
                }
            }
            if (!ended.isEmpty()) {
                dependents.ended(c, ended, released); // steps out of attempts end their dependents too
            }
            return done;
        });
    }

    /**
     * The guarded rescue UPDATE. It re-checks the cancel flag that decided {@code next}: a cancel
     * requested after the SELECT makes it match 0 rows, and the next round decides again.
     */
    private int rescueOne(Connection c, long id, long token, boolean cancelRequested, TaskStatus next, String reason)
            throws SQLException {
        return update.to(next)
                .set("run_at = " + dialect.now() + ", last_error = ?")
                .held()
                .and("cancel_requested = ? AND lease_expires_at < " + dialect.now())
                .run(c, reason, id, token, cancelRequested);
    }
}
