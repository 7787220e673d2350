package io.dbtasks.internal.lease;

import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Claimable;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.limit.LimitSet;
import io.dbtasks.internal.limit.RateWindow;
import io.dbtasks.limit.Limit;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The claims of a queue that has limits, or is set fair: at most a key's limit of its tasks RUNNING
 * at once, across every engine, decided by the database in the claim's own transaction; due tasks
 * in claim order ({@link #claimInOrder}, while no limit binds in a queue not set fair) or round robin
 * over concurrency keys ({@link #claim}).
 *
 * <p>The round robin protocol, in one READ COMMITTED transaction:
 *
 * <ol>
 *   <li>For a queue with a queue-wide rate only: lock the queue's row in {@code dbtasks_queue_rate},
 *       waiting for a claim of the queue that holds it, and count the queue's starts in the window
 *       ({@link RateWindow#queueRoom}); the claim takes at most what the window leaves (nothing, and
 *       no further statement, if it is full). Every later step runs under that lock, and the starts
 *       of the claim are logged before it commits ({@link RateWindow#recordQueue}).
 *   <li>Count the queue's RUNNING tasks by key, without locks (only when the queue has limits), to
 *       know which keys are already at their limit; with them, the keys this engine found at their
 *       rate whose window has not freed a start yet ({@link RateWindow#heldKeys}).
 *   <li>List the keys that have PENDING tasks, in key order from after the key this engine's last
 *       claim of the queue served last, wrapping around (a rotation, so that when there are more keys
 *       than a claim takes, every key gets its turn), through the per-key claim index ({@link
 *       Dialect#pendingKeys()}: one probe per key, or windows of {@value #KEY_WINDOW} entries). Read the first due tasks of each listed key not at its limit, in
 *       claim order, through the per-key claim index, and the due tasks without a key among the first
 *       few of the queue. Keys at their limit cost their probe and nothing more, whatever their
 *       backlog.
 *   <li>Lock each limited key among them, skipping keys another claim holds: that claim starts what
 *       the key has room for. A key's lock is its row in {@code dbtasks_concurrency_key} (created on
 *       first use), or where the database has them a transaction-level advisory lock ({@link
 *       Dialect#keyLocks()}, PostgreSQL). Every claim that starts a task of a key holds that lock
 *       until it commits, so claims of one key take turns on every engine, and engines that read the
 *       same candidates share out the keys instead of queueing for them. On PostgreSQL the same
 *       statement first waits for the queue's lock in shared mode, which claims in claim order
 *       under the queue's lock hold exclusively ({@link Dialect#queueClaim}).
 *   <li>Count those keys' RUNNING tasks again, now under the lock: a statement begun after the lock
 *       was granted sees every claim of the key committed before it (READ COMMITTED). For a FIFO key,
 *       also find its oldest PENDING or RUNNING task, the only one that may start. For a key with a
 *       rate, count its starts in the window ({@link RateWindow#room}): a key may start the least of
 *       what its running limit and its rate leave.
 *   <li>Pick candidates round robin over keys in the rotation's order (each key's first due task,
 *       then each key's second...), each limited key up to what its limit and rate leave free; the
 *       tasks without a key form one more key, first in line.
 *   <li>Claim the picked tasks still PENDING and due ({@code FOR UPDATE SKIP LOCKED}, then the
 *       claim's update by primary key). If another engine claimed some of them first (engines read
 *       the same candidates, and the one that waited for a key lock read them before the other
 *       committed), read the candidates again from step 2, up to {@value #ROUNDS} rounds, keeping
 *       the locks and counts of the keys already locked; log the starts of keys with a rate ({@link
 *       RateWindow#record}); then commit.
 * </ol>
 *
 * <p>Nothing lowers a count but a task leaving RUNNING (settle, retry, rescue, hand-back), and each
 * of those only lowers it, so none needs the key's lock: a task whose worker died still counts until
 * the rescue moves it. A claim that loses a deadlock between key locks is rolled back and retried.
 */
final class KeyedClaim {
    /** Due tasks among which a claim looks for tasks without a key, per wanted task. */
    static final int CANDIDATES_PER_TASK = 4;
    /** How many times one claim reads candidates again when another claim took the ones it picked. */
    static final int ROUNDS = 3;
    /** The fewest keys one claim lists. */
    static final int MIN_KEYS = 8;
    /** The most keys one claim lists; past this many, the rotation reaches the others in later claims. */
    static final int MAX_KEYS = 256;
    /**
     * Index entries one read of the keys with PENDING tasks covers where the database cannot skip
     * from key to key: a key with a longer backlog costs one more read, not its backlog.
     */
    static final int KEY_WINDOW = 1_000;
    /** Keys whose first tasks one statement reads. */
    static final int KEYS_PER_STATEMENT = 64;
    /** The most due tasks, in claim order, among which a claim looks for tasks without a key. */
    static final int SCAN = 400;
    /** Keys at their limit whose due tasks the end of a claim looks for by name. */
    static final int MAX_EXCLUDED_KEYS = 500;

    private final Dialect dialect;
    private final RateWindow rates;

    KeyedClaim(Dialect dialect, RateWindow rates) {
        this.dialect = dialect;
        this.rates = rates;
    }

    private record Candidate(long id, String key, int priority, Instant runAt) {
        Candidate(long id, String key) {
            this(id, key, 0, Instant.EPOCH);
        }
    }

    /** Claim order: priority first, then run time, then enqueue order. */
    private static final Comparator<Candidate> CLAIM_ORDER = Comparator.comparingInt(Candidate::priority)
            .reversed()
            .thenComparing(Candidate::runAt)
            .thenComparingLong(Candidate::id);

    /**
     * @param tasks the candidates, grouped for the round robin
     * @param keys the keys listed, in rotation order, whether read or at their limit
     */
    private record Candidates(List<Candidate> tasks, List<String> keys) {}

    /** Per queue, the key this engine's last claim served last: the next claim's keys start after it. */
    private final Map<String, String> cursors = new ConcurrentHashMap<>();

    /**
     * @param rows the claimed rows
     * @param heldBack whether due tasks were left because their key was at its limit, so that the
     *     claim may come back short while the queue is not drained
     * @param headHeldBack for a claim in claim order: whether it left more of the due tasks it locked
     *     behind a limit than it started, so that the head of the queue is held back and the next
     *     claims should go round robin, which looks past keys at their limit
     */
    record Result<T>(List<T> rows, boolean heldBack, boolean headHeldBack) {
        Result(List<T> rows, boolean heldBack) {
            this(rows, heldBack, heldBack);
        }

        /** The result of a claim in claim order that locked {@code locked} due tasks. */
        static <T> Result<T> inOrder(List<T> rows, long locked) {
            return new Result<>(rows, locked > rows.size(), locked > 2L * rows.size());
        }
    }

    /**
     * Claims up to {@code limit} due tasks of {@code queue} within its limits; runs its own
     * transaction on {@code c}.
     */
    <T> Result<T> claim(
            Connection c,
            String queue,
            Claimable claimable,
            LimitSet limits,
            int limit,
            String owner,
            long leaseMillis,
            Dialect.RowReader<T> reader)
            throws SQLException {
        if (limits.queueRate() != null && rates.queueHeld(queue, limits.queueRate())) {
            // This engine found the queue's window full and it has not freed a start yet: a claim now
            // would wait for the queue's lock to start nothing.
            return new Result<>(List.of(), true);
        }
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            dialect.readCommittedTransaction(c);
            Result<T> result = claimIn(c, queue, claimable, limits, limit, owner, leaseMillis, reader);
            c.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    /**
     * Claims up to {@code limit} due tasks of {@code queue} in claim order, within its limits: the
     * claim of a queue with limits that is not set fair, while its limits hold nothing back. Runs its
     * own READ COMMITTED transaction on {@code c}:
     *
     * <ol>
     *   <li>Where the database offers it ({@link Dialect#queueClaim}, PostgreSQL) and {@code c} is in
     *       auto-commit, lock the queue exclusively instead of keys, in one round trip: if {@code
     *       limit} is at most the queue's smallest limit, start the first due tasks if the queue has
     *       at most that limit less {@code limit} tasks RUNNING, whatever their keys (no count per
     *       key, and no count of the queue either while the bound of its RUNNING tasks the last such
     *       claim left may be trusted: see {@link #RUNNING_BOUND_MAX_AGE_MILLIS}); if that started
     *       none (too many RUNNING, or nothing due), claims of the queue skip it for the next
     *       second. Otherwise lock the first due tasks, count their limited keys' RUNNING tasks and
     *       start those with room, in one statement. The steps below are for the other cases.
     *   <li>Lock the first {@code limit} due tasks in claim order ({@code FOR UPDATE SKIP LOCKED}), as
     *       the plain claim reads them.
     *   <li>Lock their limited keys, waiting for a claim that holds one (it commits within its claim).
     *       On PostgreSQL these are transaction-level advisory locks taken in hash order ({@link
     *       Dialect#inOrderClaim}), so such claims never deadlock. Elsewhere a key's lock is its row in
     *       {@code dbtasks_concurrency_key}: the existing rows are locked in key order, then the
     *       missing ones created (an insert locks its row); at a key's first use two claims may
     *       deadlock there, and the database rolls one back, which runs again.
     *   <li>Count those keys' RUNNING tasks, in a statement begun after the locks were granted, so that
     *       it sees every claim of those keys committed before (READ COMMITTED).
     *   <li>Start the locked tasks in claim order while their key has room; the others stay PENDING
     *       (their row locks end with the transaction).
     * </ol>
     *
     * <p>Every claim that starts a task of a limited key holds the key's lock from before its count to
     * its commit, in this claim and in {@link #claim}, so no two claims of a key count at once; where
     * claims may count the queue instead, each claim that counts keys holds the queue's lock shared
     * from before its count to its commit, so none counts while one counts the queue. Four
     * statements whatever the number of keys, against the round robin's reads of the keys with due
     * tasks and their first tasks.
     *
     * @return the claimed rows, and {@code heldBack} if a locked task was left because its key was at
     *     its limit: the caller then claims the rest round robin, which looks past such keys
     */
    <T> Result<T> claimInOrder(
            Connection c,
            String queue,
            Claimable claimable,
            LimitSet limits,
            int limit,
            String owner,
            long leaseMillis,
            Dialect.RowReader<T> reader)
            throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        if (autoCommit) {
            java.util.Optional<Dialect.QueueClaim> underQueueLock = dialect.queueClaim(claimable);
            if (underQueueLock.isPresent()) {
                return claimUnderQueueLock(
                        c, underQueueLock.get(), queue, claimable, limits, limit, owner, leaseMillis, reader);
            }
        }
        c.setAutoCommit(false);
        try {
            dialect.readCommittedTransaction(c);
            java.util.Optional<Dialect.InOrderClaim> twoStatements = dialect.inOrderClaim(claimable);
            if (twoStatements.isPresent()) {
                Result<T> result = claimInOrder(
                        c, twoStatements.get(), queue, claimable, limits, limit, owner, leaseMillis, reader);
                c.commit();
                return result;
            }
            List<Candidate> due = new ArrayList<>(limit);
            try (PreparedStatement ps = c.prepareStatement("SELECT id, concurrency_key FROM dbtasks_task WHERE "
                    + dialect.dueCondition(claimable) + " ORDER BY " + dialect.claimOrder() + " LIMIT ?"
                    + dialect.forUpdateSkipLocked())) {
                ps.setInt(dialect.bindDue(ps, 1, queue, claimable), limit);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        due.add(new Candidate(rs.getLong(1), rs.getString(2)));
                    }
                }
            }
            Set<String> limited = new TreeSet<>();
            for (Candidate k : due) {
                if (k.key() != null && limits.forKey(k.key()).isPresent()) {
                    limited.add(k.key());
                }
            }
            Map<String, Integer> room = new HashMap<>();
            if (!limited.isEmpty()) {
                lockKeysWaiting(c, queue, limited);
                Map<String, Long> running = runningByKey(c, queue, limited);
                for (String key : limited) {
                    long free = limits.forKey(key).orElseThrow().maxRunning() - running.getOrDefault(key, 0L);
                    room.put(key, (int) Math.max(0, free));
                }
            }
            List<Long> picked = new ArrayList<>(due.size());
            for (Candidate k : due) {
                Integer free = k.key() == null ? null : room.get(k.key());
                if (free == null) {
                    picked.add(k.id());
                } else if (free > 0) {
                    room.put(k.key(), free - 1);
                    picked.add(k.id());
                }
            }
            List<T> rows = picked.isEmpty() ? List.of() : startLocked(c, picked, owner, leaseMillis, reader);
            c.commit();
            // Every locked task was PENDING and due: those not started were left by their key's limit.
            return Result.inOrder(rows, due.size());
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    /**
     * Per queue, when ({@link System#nanoTime()}) a claim within the queue's bound last came back
     * empty: the bound did not hold, or nothing was due. Claims then count keys for {@link
     * #BOUND_RETRY_NANOS} before trying the bound again.
     */
    private final Map<String, Long> boundMissed = new ConcurrentHashMap<>();

    /** How long after a claim within the queue's bound came back empty the next one is tried. */
    static final long BOUND_RETRY_NANOS = 1_000_000_000L;

    /**
     * How old (by the database clock) the upper bound of a queue's RUNNING tasks that the last claim
     * within the queue's bound left may be for the next one to trust it instead of counting, in
     * milliseconds ({@link Dialect.QueueClaim#withinBound}). Every claim that counts the queue or its
     * keys on PostgreSQL keeps that bound true or voids it; what it cannot see is a claim of an
     * engine that does not know the queue's limits yet (they reach every engine within {@link
     * io.dbtasks.limit.Limits#REFRESH_MILLIS}), whose starts a claim within the bound counts at most
     * this much later than it would without the bound.
     */
    static final long RUNNING_BOUND_MAX_AGE_MILLIS = 100;

    /**
     * {@link #claimInOrder} under the queue's lock ({@link Dialect.QueueClaim}), in auto-commit: within
     * the queue's bound if the claim's batch fits within the smallest limit (with at most {@code
     * minRunning - limit} tasks of the queue RUNNING, starting {@code limit} more leaves every key
     * within its limit, whatever the keys), else, or if that started nothing, counting the keys of
     * the due tasks it locks.
     */
    private <T> Result<T> claimUnderQueueLock(
            Connection c,
            Dialect.QueueClaim sql,
            String queue,
            Claimable claimable,
            LimitSet limits,
            int limit,
            String owner,
            long leaseMillis,
            Dialect.RowReader<T> reader)
            throws SQLException {
        int bound = limits.minRunning() - limit;
        Long missed = boundMissed.get(queue);
        if (bound >= 0 && (missed == null || System.nanoTime() - missed >= BOUND_RETRY_NANOS)) {
            List<T> rows = new ArrayList<>(limit);
            try (PreparedStatement ps = c.prepareStatement(sql.withinBound())) {
                int i = 1;
                ps.setString(i++, queue);
                ps.setString(i++, queue);
                ps.setLong(i++, RUNNING_BOUND_MAX_AGE_MILLIS);
                ps.setInt(i++, bound);
                ps.setString(i++, queue);
                ps.setString(i++, owner);
                ps.setLong(i++, leaseMillis);
                i = dialect.bindDue(ps, i, queue, claimable);
                ps.setInt(i++, bound);
                ps.setInt(i++, limit);
                ps.setString(i, queue);
                try (ResultSet rs = claimResult(ps)) {
                    while (rs.next()) {
                        rows.add(reader.read(rs));
                    }
                }
            }
            if (!rows.isEmpty()) {
                if (missed != null) {
                    boundMissed.remove(queue);
                }
                return new Result<>(rows, false);
            }
            boundMissed.put(queue, System.nanoTime());
        }
        List<Limit> running =
                limits.limits().stream().filter(Limit::limitsRunning).toList();
        List<T> rows = new ArrayList<>(limit);
        long due = 0;
        try (PreparedStatement ps = c.prepareStatement(sql.countingKeys())) {
            int i = 1;
            ps.setString(i++, queue);
            i = dialect.bindDue(ps, i, queue, claimable);
            ps.setInt(i++, limit);
            ps.setArray(
                    i++,
                    c.createArrayOf(
                            "text",
                            running.stream()
                                    .map(l -> Dialect.likePattern(l.keyPattern()))
                                    .toArray()));
            ps.setArray(
                    i++,
                    c.createArrayOf(
                            "integer", running.stream().map(Limit::maxRunning).toArray()));
            ps.setString(i++, queue);
            ps.setString(i++, owner);
            ps.setLong(i++, leaseMillis);
            ps.setString(i, queue);
            try (ResultSet rs = claimResult(ps)) {
                while (rs.next()) {
                    due = rs.getLong("due_count");
                    if (rs.getObject("id") != null) {
                        rows.add(reader.read(rs));
                    }
                }
            }
        }
        // Every locked task was PENDING and due: those not started were left by their key's limit.
        return Result.inOrder(rows, due);
    }

    /** Runs a statement pair of {@link Dialect.QueueClaim}: skips the lock's row, returns the claim's. */
    private static ResultSet claimResult(PreparedStatement ps) throws SQLException {
        ps.execute();
        if (!ps.getMoreResults()) {
            throw new SQLException("The claim under the queue's lock returned no rows of the claim");
        }
        return ps.getResultSet();
    }

    /** {@link #claimInOrder} where the database does it in two statements; see {@link Dialect.InOrderClaim}. */
    private <T> Result<T> claimInOrder(
            Connection c,
            Dialect.InOrderClaim sql,
            String queue,
            Claimable claimable,
            LimitSet limits,
            int limit,
            String owner,
            long leaseMillis,
            Dialect.RowReader<T> reader)
            throws SQLException {
        List<Long> ids = new ArrayList<>(limit);
        List<String> keys = new ArrayList<>(limit);
        try (PreparedStatement ps = c.prepareStatement(sql.lockAndRead())) {
            int i = dialect.bindDue(ps, 1, queue, claimable);
            ps.setInt(i++, limit);
            ps.setString(i++, queue);
            ps.setArray(
                    i,
                    c.createArrayOf(
                            "text",
                            limits.limits().stream()
                                    .map(l -> Dialect.likePattern(l.keyPattern()))
                                    .distinct()
                                    .toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                    keys.add(rs.getString(2));
                }
            }
        }
        if (ids.isEmpty()) {
            return new Result<>(List.of(), false);
        }
        Integer[] caps = new Integer[ids.size()];
        Set<String> limited = new TreeSet<>();
        for (int k = 0; k < ids.size(); k++) {
            String key = keys.get(k);
            Limit l = key == null ? null : limits.forKey(key).orElse(null);
            if (l != null) {
                caps[k] = l.maxRunning();
                limited.add(key);
            }
        }
        List<T> rows = new ArrayList<>(ids.size());
        try (PreparedStatement ps = c.prepareStatement(sql.countAndStart())) {
            ps.setArray(1, c.createArrayOf("bigint", ids.toArray()));
            ps.setArray(2, c.createArrayOf("text", keys.toArray()));
            ps.setArray(3, c.createArrayOf("integer", caps));
            ps.setString(4, queue);
            ps.setArray(5, c.createArrayOf("text", limited.toArray()));
            ps.setString(6, owner);
            ps.setLong(7, leaseMillis);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(reader.read(rs));
                }
            }
        }
        // Every locked task was PENDING and due: those not started were left by their key's limit.
        return Result.inOrder(rows, ids.size());
    }

    /**
     * Locks the row of each of {@code keys}, waiting for other transactions that hold one: the existing
     * rows in key order, then the missing ones created (an insert locks its row). Where rows are
     * created meanwhile the order can differ between two claims, and a deadlock (rolled back and run
     * again by the caller) is possible at a key's first use.
     */
    private void lockKeysWaiting(Connection c, String queue, Set<String> keys) throws SQLException {
        Set<String> found = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT concurrency_key FROM dbtasks_concurrency_key"
                + " WHERE queue = ? AND concurrency_key IN (" + marks(keys.size()) + ") ORDER BY concurrency_key"
                + dialect.forUpdate())) {
            int i = 1;
            ps.setString(i++, queue);
            for (String k : keys) {
                ps.setString(i++, k);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.add(rs.getString(1));
                }
            }
        }
        if (found.size() == keys.size()) {
            return;
        }
        for (String key : keys) {
            if (found.contains(key)) {
                continue;
            }
            createOrLockKey(c, queue, key);
        }
    }

    private <T> Result<T> claimIn(
            Connection c,
            String queue,
            Claimable claimable,
            LimitSet limits,
            int asked,
            String owner,
            long leaseMillis,
            Dialect.RowReader<T> reader)
            throws SQLException {
        long began = System.nanoTime();
        // A queue-wide rate: its row's lock first (before any key's, so claims never wait in a cycle),
        // then only as many tasks as its window leaves, whatever their keys.
        RateWindow.QueueRoom queueRoom = limits.queueRate() == null ? null : rates.queueRoom(c, queue, began);
        if (queueRoom != null && queueRoom.left() == 0) {
            return new Result<>(List.of(), true);
        }
        int limit = queueRoom == null ? asked : Math.min(asked, queueRoom.left());
        Set<String> full = new TreeSet<>();
        Map<String, Long> runningAtStart = limits.isEmpty() ? Map.of() : runningByKey(c, queue, null);
        if (!limits.isEmpty()) {
            runningAtStart.forEach((key, n) -> {
                Limit l = limits.forKey(key).orElse(null);
                if (l != null && n >= l.maxRunning()) {
                    full.add(key);
                }
            });
        }
        // Keys this engine found at their rate, until their window frees: left out like full keys
        // (listed in the rotation but not read, so the fair pick gives their turn to the next keys).
        Set<String> held = rates.heldKeys(queue, limits);
        full.addAll(held);
        // Set when a due task is seen left behind a limit; keys found at their limit by the first count
        // are left out of the candidates, so whether they have due tasks is asked at the end.
        boolean[] skipped = {false};
        Set<String> fullAtStart = Set.copyOf(full);
        Map<String, Integer> room = new HashMap<>(); // keys locked by this transaction: what is left
        Map<String, Long> fifoHead = new HashMap<>();
        List<T> rows = new ArrayList<>();
        for (int round = 0; round < ROUNDS && rows.size() < limit; round++) {
            int wanted = limit - rows.size();
            room.forEach((key, free) -> {
                if (free <= 0) {
                    full.add(key);
                }
            });
            Candidates read = candidates(c, queue, claimable, full, held, wanted);
            List<Candidate> candidates = read.tasks();
            if (candidates.isEmpty()) {
                rotate(queue, read.keys(), List.of());
                break;
            }
            // Lock only the keys a pick by the unlocked count would take from: the rest of the
            // candidates' keys are left for other claims, and a limited key not locked here is not
            // picked from below.
            Map<String, Integer> estimate = new HashMap<>(room);
            for (Candidate k : candidates) {
                if (k.key() != null && !full.contains(k.key()) && !estimate.containsKey(k.key())) {
                    limits.forKey(k.key())
                            .ifPresent(l -> estimate.put(k.key(), estimatedRoom(l, runningAtStart, k.key())));
                }
            }
            Set<String> limited = new TreeSet<>();
            for (Candidate k : pick(candidates, full, limits, estimate, Map.of(), wanted, new boolean[1])) {
                if (k.key() != null
                        && !room.containsKey(k.key())
                        && limits.forKey(k.key()).isPresent()) {
                    limited.add(k.key());
                }
            }
            if (!limited.isEmpty()) {
                Set<String> busy = lockKeys(c, queue, limited);
                if (!busy.isEmpty()) {
                    // Another claim holds them and starts what they have room for; leave them to it.
                    limited.removeAll(busy);
                    full.addAll(busy);
                    skipped[0] = true;
                }
            }
            if (!limited.isEmpty()) {
                Map<String, Long> running = runningByKey(c, queue, limited);
                Map<String, Integer> rateRoom = rates.room(c, queue, limited, limits, began);
                Set<String> fifo = new TreeSet<>();
                for (String key : limited) {
                    Limit l = limits.forKey(key).orElseThrow();
                    int free = (int) Math.max(0, l.maxRunning() - running.getOrDefault(key, 0L));
                    room.put(key, Math.min(free, rateRoom.getOrDefault(key, Integer.MAX_VALUE)));
                    if (l.fifo()) {
                        fifo.add(key);
                    }
                }
                if (!fifo.isEmpty()) {
                    fifoHead.putAll(oldestUnfinished(c, queue, fifo));
                    candidates = withDueHeads(c, queue, claimable, candidates, fifoHead);
                }
            }
            // A key locked here may have had less room than the estimate gave it (its rate's window
            // is full, or a task started since the unlocked count): the estimate's pick then left
            // other keys unlocked, and another round, with that key now full, reads and locks them.
            boolean overestimated = false;
            for (String key : limited) {
                overestimated |= room.get(key) < estimate.getOrDefault(key, Integer.MAX_VALUE);
            }
            List<Candidate> picked = pick(candidates, full, limits, room, fifoHead, wanted, skipped);
            rotate(queue, read.keys(), picked);
            boolean again = overestimated && picked.size() < wanted;
            if (picked.isEmpty()) {
                if (again) {
                    continue;
                }
                break;
            }
            Set<Long> got = new HashSet<>();
            rows.addAll(claimIds(c, picked.stream().map(Candidate::id).toList(), owner, leaseMillis, reader, got));
            Map<Long, String> started = new HashMap<>();
            for (Candidate k : picked) {
                if (got.contains(k.id()) && k.key() != null) {
                    started.put(k.id(), k.key());
                }
            }
            rates.record(c, queue, started, limits);
            if (queueRoom != null) {
                rates.recordQueue(c, queue, got, queueRoom.rate());
            }
            if (got.size() == picked.size() && !again) {
                break; // nothing lost to another claim: a further round would find what this one left
            }
            for (Candidate k : picked) {
                if (!got.contains(k.id()) && k.key() != null && room.containsKey(k.key())) {
                    room.merge(k.key(), 1, Integer::sum); // picked, but not started here
                }
            }
            // Another engine claimed some of the picked tasks first (its candidates were ours):
            // read the candidates again, now that its claim is visible, and give back the room.
            // Tasks claimed by the other engine count in the next round's counts of newly locked
            // keys; keys locked here keep what this transaction left them, and a FIFO key its head
            // (no other claim can start a task of a key this transaction holds).
        }
        if (!skipped[0] && rows.size() < limit && !fullAtStart.isEmpty()) {
            skipped[0] = anyDue(c, queue, claimable, fullAtStart);
        }
        if (queueRoom != null && limit < asked && rows.size() == limit) {
            // The claim took all the queue's window left, and wanted more: held back by the queue's
            // rate until its window frees a start, when this engine comes back for the queue.
            rates.queueFilled(c, queue, queueRoom.rate());
            skipped[0] = true;
        }
        return new Result<>(rows, skipped[0]);
    }

    /**
     * What {@code key} may start by the count read without its lock: its limit less its running tasks,
     * and no more than its rate's starts per window (the count under the lock decides).
     */
    private static int estimatedRoom(Limit l, Map<String, Long> running, String key) {
        long free = Math.max(0, l.maxRunning() - running.getOrDefault(key, 0L));
        return (int)
                Math.min(free, l.rate() == null ? Integer.MAX_VALUE : l.rate().starts());
    }

    /** The group of the tasks without a key in the round robin. */
    private static final Object NO_KEY = new Object();

    /**
     * Moves the queue's rotation past the last of {@code keys} (in their order) that a task was picked
     * from, or past all of them if none was: the next claim lists the keys after it first.
     */
    private void rotate(String queue, List<String> keys, List<Candidate> picked) {
        if (keys.isEmpty()) {
            return;
        }
        String last = picked.isEmpty() ? keys.get(keys.size() - 1) : null;
        Set<String> served = new HashSet<>();
        picked.forEach(k -> served.add(k.key()));
        for (String k : keys) {
            if (served.contains(k)) {
                last = k;
            }
        }
        if (last == null) {
            return; // only tasks without a key were picked: the keys keep their turn
        }
        cursors.put(queue, last);
    }

    /** Whether a due task of any of {@code keys} (the first {@value #MAX_EXCLUDED_KEYS}) exists. */
    private boolean anyDue(Connection c, String queue, Claimable claimable, Set<String> keys) throws SQLException {
        List<String> some = keys.stream().limit(MAX_EXCLUDED_KEYS).toList();
        try (PreparedStatement ps = c.prepareStatement("SELECT id FROM dbtasks_task WHERE "
                + dialect.dueCondition(claimable) + " AND concurrency_key IN (" + marks(some.size()) + ") LIMIT 1")) {
            int i = dialect.bindDue(ps, 1, queue, claimable);
            for (String k : some) {
                ps.setString(i++, k);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** RUNNING tasks of the queue by key: every key, or only {@code keys}. */
    private Map<String, Long> runningByKey(Connection c, String queue, Set<String> keys) throws SQLException {
        String sql = "SELECT concurrency_key, COUNT(*) FROM dbtasks_task WHERE " + Dialect.LIVE + " AND status = "
                + Dialect.status(TaskStatus.RUNNING) + " AND queue = ? AND "
                + (keys == null ? "concurrency_key IS NOT NULL" : "concurrency_key IN (" + marks(keys.size()) + ")")
                + " GROUP BY concurrency_key";
        Map<String, Long> counts = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            ps.setString(i++, queue);
            if (keys != null) {
                for (String k : keys) {
                    ps.setString(i++, k);
                }
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    counts.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return counts;
    }

    /**
     * The due candidates of a claim for {@code wanted} tasks, grouped for the round robin: the tasks
     * without a key first (as one group), then each key's first due tasks in claim order, keys in the
     * order of the rotation. Keys in {@code full} are listed but not read.
     */
    private Candidates candidates(
            Connection c, String queue, Claimable claimable, Set<String> full, Set<String> held, int wanted)
            throws SQLException {
        // Enough keys to fill the claim one task each, besides the keys known to be at their limit.
        int maxKeys = Math.min(MAX_KEYS, Math.max(MIN_KEYS, wanted + full.size()));
        String cursor = cursors.getOrDefault(queue, "");
        List<String> keys = pendingKeys(c, queue, cursor, maxKeys);
        if (keys.size() < maxKeys && !cursor.isEmpty()) { // past the last key: on from the first
            Set<String> seen = new HashSet<>(keys);
            for (String k : pendingKeys(c, queue, "", maxKeys - keys.size())) {
                if (seen.add(k)) {
                    keys.add(k);
                }
            }
        }
        List<String> eligible = keys.stream().filter(k -> !full.contains(k)).toList();
        // Each key's fair share and a little more, so that keys with fewer tasks leave enough others.
        int perKey =
                eligible.isEmpty() ? 0 : Math.min(wanted, (2 * wanted + eligible.size() - 1) / eligible.size() + 1);
        Map<String, List<Candidate>> byKey = firstOfKeys(
                c,
                queue,
                claimable,
                eligible,
                perKey,
                Math.min(SCAN, Math.max(MIN_KEYS, wanted * CANDIDATES_PER_TASK)),
                held);
        List<Candidate> keyless = byKey.getOrDefault(null, List.of());
        List<Candidate> all = new ArrayList<>(keyless.size() > wanted ? keyless.subList(0, wanted) : keyless);
        byKey.remove(null);
        int read = byKey.values().stream().mapToInt(List::size).sum() + all.size();
        if (read < wanted && perKey < wanted && !eligible.isEmpty()) {
            // Too few: read more of the keys that may have more, enough to fill the claim.
            List<String> more = eligible.stream()
                    .filter(k -> byKey.getOrDefault(k, List.of()).size() == perKey)
                    .toList();
            if (!more.isEmpty()) {
                byKey.putAll(firstOfKeys(c, queue, claimable, more, perKey + wanted - read, 0, Set.of()));
            }
        }
        for (String k : eligible) {
            all.addAll(byKey.getOrDefault(k, List.of()));
        }
        return new Candidates(all, keys);
    }

    /**
     * @return up to {@code limit} keys with PENDING tasks in the queue after {@code after}, in key order
     */
    private List<String> pendingKeys(Connection c, String queue, String after, int limit) throws SQLException {
        List<String> keys = new ArrayList<>();
        String from = after;
        while (keys.size() < limit) {
            long entries = 0;
            String last = null;
            try (PreparedStatement ps = c.prepareStatement(dialect.pendingKeys())) {
                ps.setString(1, queue);
                ps.setString(2, from);
                ps.setInt(3, dialect.pendingKeysSkip() ? limit : KEY_WINDOW);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        last = rs.getString(1);
                        entries += rs.getLong(2);
                        if (keys.size() < limit) {
                            keys.add(last);
                        }
                    }
                }
            }
            if (dialect.pendingKeysSkip() || entries < KEY_WINDOW || last == null) {
                break; // every key after the start was read
            }
            from = last; // the window ended inside the last key's entries: read on after them
        }
        return keys;
    }

    /**
     * The first {@code perKey} due tasks of each of {@code keys}, in claim order, read through the
     * per-key claim index; with {@code keylessWindow} above 0, in the same statement the due tasks
     * without a key among the first {@code keylessWindow} due tasks of the queue in claim order (a
     * bounded read: tasks without a key behind a longer backlog of keyed tasks wait until they come
     * near the front), under the {@code null} key. That window leaves out the tasks of {@code held}
     * (the first {@value #MAX_EXCLUDED_KEYS}), the keys this engine found at their rate: a key waiting
     * for its window does not hold back the tasks without a key, at the cost of reading past its
     * backlog in the index while it waits.
     */
    private Map<String, List<Candidate>> firstOfKeys(
            Connection c,
            String queue,
            Claimable claimable,
            List<String> keys,
            int perKey,
            int keylessWindow,
            Set<String> held)
            throws SQLException {
        Map<String, List<Candidate>> byKey = new HashMap<>();
        List<String> passed = held.stream().limit(MAX_EXCLUDED_KEYS).toList();
        String keyless = "(SELECT id, concurrency_key, priority, run_at FROM (SELECT id, concurrency_key, priority,"
                + " run_at FROM dbtasks_task WHERE " + dialect.dueCondition(claimable)
                + (passed.isEmpty()
                        ? ""
                        : " AND (concurrency_key IS NULL OR concurrency_key NOT IN (" + marks(passed.size()) + "))")
                + " ORDER BY "
                + dialect.claimOrder() + " LIMIT ?) due WHERE concurrency_key IS NULL)";
        java.util.Optional<String> lateral = dialect.firstOfKeys(claimable);
        List<List<String>> batches = new ArrayList<>();
        if (lateral.isPresent()) {
            batches.add(keys);
        } else {
            for (int from = 0; from < keys.size(); from += KEYS_PER_STATEMENT) {
                batches.add(keys.subList(from, Math.min(keys.size(), from + KEYS_PER_STATEMENT)));
            }
        }
        if (batches.isEmpty()) {
            batches.add(List.of());
        }
        boolean withKeyless = keylessWindow > 0;
        for (List<String> batch : batches) {
            List<String> parts = new ArrayList<>();
            if (withKeyless) {
                parts.add(keyless);
            }
            if (!batch.isEmpty()) {
                if (lateral.isPresent()) {
                    parts.add("(" + lateral.get() + ")");
                } else {
                    parts.addAll(Collections.nCopies(
                            batch.size(),
                            "(SELECT id, concurrency_key, priority, run_at FROM " + dialect.taskTableForKey()
                                    + " WHERE " + dialect.dueCondition(claimable) + " AND " + dialect.pendingOfKey()
                                    + " ORDER BY " + dialect.keyClaimOrder() + " LIMIT ?)"));
                }
            }
            if (parts.isEmpty()) {
                continue;
            }
            try (PreparedStatement ps = c.prepareStatement(String.join(" UNION ALL ", parts))) {
                int i = 1;
                if (withKeyless) {
                    i = dialect.bindDue(ps, i, queue, claimable);
                    for (String k : passed) {
                        ps.setString(i++, k);
                    }
                    ps.setInt(i++, keylessWindow);
                }
                if (!batch.isEmpty() && lateral.isPresent()) {
                    ps.setArray(i++, c.createArrayOf("varchar", batch.toArray()));
                    i = dialect.bindDue(ps, i, queue, claimable);
                    ps.setInt(i, perKey);
                } else {
                    for (String k : batch) {
                        i = dialect.bindDue(ps, i, queue, claimable);
                        ps.setString(i++, k);
                        ps.setInt(i++, perKey);
                    }
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        Candidate k = new Candidate(
                                rs.getLong(1), rs.getString(2), rs.getInt(3), dialect.getInstant(rs, "run_at"));
                        byKey.computeIfAbsent(k.key(), x -> new ArrayList<>()).add(k);
                    }
                }
            }
            withKeyless = false;
        }
        byKey.values().forEach(l -> l.sort(CLAIM_ORDER));
        return byKey;
    }

    /**
     * Locks the row of each key that no other transaction holds, creating the missing ones. Existing
     * rows are locked in one statement that skips those held elsewhere (another claim of the key, which
     * starts what the key has room for); a new row is locked by its insert.
     *
     * @return the keys another transaction holds, not locked here
     */
    private Set<String> lockKeys(Connection c, String queue, Set<String> keys) throws SQLException {
        java.util.Optional<Dialect.KeyLocks> locks = dialect.keyLocks();
        if (locks.isPresent()) {
            Set<String> busy = new HashSet<>();
            try (PreparedStatement ps = c.prepareStatement(locks.get().trying())) {
                ps.setString(1, queue);
                ps.setArray(2, c.createArrayOf("text", keys.toArray()));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        busy.add(rs.getString(1));
                    }
                }
            }
            return busy;
        }
        Set<String> found = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT concurrency_key FROM dbtasks_concurrency_key"
                + " WHERE queue = ? AND concurrency_key IN (" + marks(keys.size()) + ")"
                + dialect.forUpdateSkipLocked())) {
            int i = 1;
            ps.setString(i++, queue);
            for (String k : keys) {
                ps.setString(i++, k);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.add(rs.getString(1));
                }
            }
        }
        Set<String> existing = existingKeys(c, queue, keys, found);
        Set<String> busy = new HashSet<>();
        for (String key : keys) {
            if (found.contains(key)) {
                continue;
            }
            if (existing.contains(key)) {
                busy.add(key);
                continue;
            }
            createOrLockKey(c, queue, key);
        }
        return busy;
    }

    /**
     * Creates the row of {@code key}, which locks it; if another claim created it meanwhile, locks it
     * as it stands, waiting for that claim. A row deleted between the two (by retention's sweep of
     * unused keys) fails the claim as a serialization failure, which the caller runs again.
     */
    private void createOrLockKey(Connection c, String queue, String key) throws SQLException {
        boolean inserted;
        try (PreparedStatement ps =
                c.prepareStatement("INSERT INTO dbtasks_concurrency_key (queue, concurrency_key) VALUES (?, ?)"
                        + dialect.onConflictDoNothing())) {
            ps.setString(1, queue);
            ps.setString(2, key);
            inserted = dialect.insertIfAbsent(ps);
        }
        if (!inserted) {
            try (PreparedStatement ps = c.prepareStatement("SELECT concurrency_key FROM dbtasks_concurrency_key"
                    + " WHERE queue = ? AND concurrency_key = ?" + dialect.forUpdate())) {
                ps.setString(1, queue);
                ps.setString(2, key);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new SQLException("the row of concurrency key " + key + " vanished", "40001");
                    }
                }
            }
        }
    }

    /** Which of {@code keys} not in {@code locked} have a row (held by another transaction). */
    private static Set<String> existingKeys(Connection c, String queue, Set<String> keys, Set<String> locked)
            throws SQLException {
        List<String> rest = keys.stream().filter(k -> !locked.contains(k)).toList();
        Set<String> existing = new HashSet<>();
        if (rest.isEmpty()) {
            return existing;
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT concurrency_key FROM dbtasks_concurrency_key"
                + " WHERE queue = ? AND concurrency_key IN (" + marks(rest.size()) + ")")) {
            int i = 1;
            ps.setString(i++, queue);
            for (String k : rest) {
                ps.setString(i++, k);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    existing.add(rs.getString(1));
                }
            }
        }
        return existing;
    }

    /**
     * The id of each key's oldest PENDING or RUNNING task, the only one a FIFO key may start. The two
     * states are read apart, each through an index that holds it: the live rows have no index by key
     * alone (see {@link Dialect#liveOfKeys}).
     */
    private Map<String, Long> oldestUnfinished(Connection c, String queue, Set<String> keys) throws SQLException {
        Map<String, Long> heads = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT concurrency_key, MIN(id) FROM ("
                + Dialect.liveOfKeys(TaskStatus.PENDING, keys.size()) + " UNION ALL "
                + Dialect.liveOfKeys(TaskStatus.RUNNING, keys.size()) + ") u GROUP BY concurrency_key")) {
            int i = 1;
            for (int state = 0; state < 2; state++) {
                ps.setString(i++, queue);
                for (String k : keys) {
                    ps.setString(i++, k);
                }
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    heads.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return heads;
    }

    /**
     * The candidates with each FIFO key's head in front, if it is due and not among them (a key's
     * candidates are its first tasks in claim order, which puts priority before enqueue order).
     */
    private List<Candidate> withDueHeads(
            Connection c, String queue, Claimable claimable, List<Candidate> candidates, Map<String, Long> heads)
            throws SQLException {
        Set<Long> have = new HashSet<>();
        candidates.forEach(k -> have.add(k.id()));
        List<Long> missing =
                heads.values().stream().filter(id -> !have.contains(id)).toList();
        if (missing.isEmpty()) {
            return candidates;
        }
        List<Candidate> all = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT id, concurrency_key FROM dbtasks_task WHERE "
                + dialect.dueCondition(claimable) + " AND id IN (" + marks(missing.size()) + ")")) {
            int i = dialect.bindDue(ps, 1, queue, claimable);
            for (Long id : missing) {
                ps.setLong(i++, id);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    all.add(new Candidate(rs.getLong(1), rs.getString(2)));
                }
            }
        }
        all.addAll(candidates);
        return all;
    }

    /**
     * Round robin over keys: each key's tasks keep their claim order, and the n-th task of every key
     * comes before the (n+1)-th of any, so a key with a long backlog takes its share of a claim and
     * no more while others have due tasks. Tasks without a key count together as one key, with no
     * limit.
     */
    private static List<Candidate> pick(
            List<Candidate> candidates,
            Set<String> full,
            LimitSet limits,
            Map<String, Integer> room,
            Map<String, Long> fifoHead,
            int limit,
            boolean[] skipped) {
        Map<Object, List<Candidate>> byKey = new LinkedHashMap<>();
        for (Candidate k : candidates) {
            if (k.key() != null && full.contains(k.key())) {
                skipped[0] = true;
                continue; // at its limit (more keys than the query left out by name)
            }
            Object group = k.key() == null ? NO_KEY : k.key();
            byKey.computeIfAbsent(group, g -> new ArrayList<>()).add(k);
        }
        List<Candidate> picked = new ArrayList<>(limit);
        Map<String, Integer> left = room; // what each locked key has left, taken as tasks are picked
        for (int rank = 0; picked.size() < limit; rank++) {
            boolean any = false;
            for (List<Candidate> tasks : byKey.values()) {
                if (rank >= tasks.size() || picked.size() >= limit) {
                    continue;
                }
                any = true;
                Candidate k = tasks.get(rank);
                Integer free = k.key() == null ? null : left.get(k.key());
                if (free == null && k.key() != null && limits.forKey(k.key()).isPresent()) {
                    continue; // limited, but not locked by this claim: its count is not known
                }
                if (free != null) {
                    Long head = fifoHead.get(k.key());
                    if (free <= 0 || (head != null && head != k.id())) {
                        skipped[0] = true;
                        continue;
                    }
                    left.put(k.key(), free - 1);
                }
                picked.add(k);
            }
            if (!any) {
                break;
            }
        }
        return picked;
    }

    /** Claims those of {@code ids} still PENDING and due, in this transaction. */
    private <T> List<T> claimIds(
            Connection c,
            List<Long> ids,
            String owner,
            long leaseMillis,
            Dialect.RowReader<T> reader,
            Set<Long> claimed)
            throws SQLException {
        List<Long> locked = new ArrayList<>(ids.size());
        try (PreparedStatement ps = c.prepareStatement("SELECT id FROM " + dialect.taskTableByKey() + " WHERE id IN ("
                + marks(ids.size()) + ") AND status = " + Dialect.status(TaskStatus.PENDING) + " AND run_at <= "
                + dialect.now() + dialect.forUpdateSkipLocked())) {
            for (int i = 0; i < ids.size(); i++) {
                ps.setLong(i + 1, ids.get(i));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    locked.add(rs.getLong(1));
                }
            }
        }
        if (locked.isEmpty()) {
            return new ArrayList<>();
        }
        Collections.sort(locked);
        claimed.addAll(locked);
        return startLocked(c, locked, owner, leaseMillis, reader);
    }

    /**
     * Starts the tasks of {@code ids}, PENDING and locked by this transaction: the claim's update, and
     * the rows as it left them.
     *
     * @throws IllegalStateException if fewer rows changed than were locked (never, while the locks hold)
     */
    private <T> List<T> startLocked(
            Connection c, List<Long> ids, String owner, long leaseMillis, Dialect.RowReader<T> reader)
            throws SQLException {
        String in = marks(ids.size());
        String update = "UPDATE " + dialect.taskTableByKey() + " SET " + dialect.claimSetList() + " WHERE "
                + Dialect.LIVE + " AND status = " + Dialect.status(TaskStatus.PENDING) + " AND id IN (" + in + ")";
        java.util.Optional<String> readingBack = dialect.updateReadingBack(update);
        List<T> rows = new ArrayList<>(ids.size());
        try (PreparedStatement ps = c.prepareStatement(readingBack.orElse(update))) {
            ps.setString(1, owner);
            ps.setLong(2, leaseMillis);
            for (int i = 0; i < ids.size(); i++) {
                ps.setLong(3 + i, ids.get(i));
            }
            if (readingBack.isPresent()) {
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows.add(reader.read(rs));
                    }
                }
                if (rows.size() != ids.size()) {
                    throw new IllegalStateException("claim locked " + ids.size() + " rows but updated " + rows.size());
                }
                return rows;
            }
            int updated = ps.executeUpdate();
            if (updated != ids.size()) {
                throw new IllegalStateException("claim locked " + ids.size() + " rows but updated " + updated);
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT " + Dialect.TASK_COLUMNS + " FROM dbtasks_task WHERE "
                + Dialect.LIVE + " AND id IN (" + in + ")")) {
            for (int i = 0; i < ids.size(); i++) {
                ps.setLong(1 + i, ids.get(i));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(reader.read(rs));
                }
            }
        }
        return rows;
    }

    private static String marks(int n) {
        return String.join(", ", Collections.nCopies(n, "?"));
    }
}
