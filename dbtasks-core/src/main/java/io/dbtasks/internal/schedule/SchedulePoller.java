package io.dbtasks.internal.schedule;

import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.enqueue.Enqueuer;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.schedule.MissedSlots;
import io.dbtasks.schedule.Schedule;
import io.dbtasks.schedule.Trigger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns due slots into tasks. The protocol, run by every started engine with no leader:
 *
 * <ol>
 *   <li><b>Probe</b> (one cheap statement, the only one when nothing is due): the earliest next slot
 *       over the index on {@code next_slot}, whether a fixed delay waits for its task, and now.
 *   <li><b>Fire</b>, when a slot is due: in one transaction, lock up to {@code batch} due rows with
 *       {@code FOR UPDATE SKIP LOCKED} (another engine's rows are skipped, not waited for), plan each
 *       one's slots ({@link SlotPlanner}), insert all their tasks in one batch under their slot keys,
 *       and advance each row with an UPDATE guarded by its version; commit. A crash before the
 *       commit leaves neither tasks nor advanced rows; after it, both. Repeat while full batches come.
 *   <li><b>Release fixed delays</b> whose latest task has finished: their next slot becomes the
 *       task's end plus the delay (a version-guarded UPDATE; the loser of a race changes nothing).
 *   <li><b>Sleep</b> until the earliest next slot, at most the poll interval (so another engine's
 *       new or changed schedule is seen within it), or until woken by a local change.
 * </ol>
 *
 * <p>"Now" is the database's clock, written into the statements, unless a test clock is injected,
 * in which case its instant is bound instead. The slot tasks are due at their slot (database time),
 * so with a test clock they are due at once.
 */
public final class SchedulePoller {
    private static final Logger log = LoggerFactory.getLogger(SchedulePoller.class);
    /** The wait after a due probe found every due row locked by another engine. */
    private static final long CONTENDED_WAIT_MILLIS = 20;

    /** How often held schedules are looked for and resumed. */
    private static final long HELD_CHECK_NANOS = TimeUnit.SECONDS.toNanos(5);

    /** The most names one advancing UPDATE lists. */
    private static final int MAX_NAMES = 500;

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final Enqueuer enqueuer;
    private final ScheduleRows rows;
    private final HeldSchedules held;
    /** When {@link HeldSchedules#check} is due next, by {@link System#nanoTime()}. */
    private long nextHeldCheck = System.nanoTime();

    private final Clock clock;
    private final int batch;
    private final long pollMillis;
    private final String nowExpr;
    private final String probeSql;
    private final String dueSql;
    private final String advanceSql;
    private final String advanceWithSlotSql;
    private final String awaitingSql;
    private final String releaseSql;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition woken = lock.newCondition();
    private boolean wake;
    private volatile boolean running;
    private Thread thread;

    /** @param kinds the task kinds this engine has handlers for */
    public SchedulePoller(
            Jdbc jdbc, Dialect dialect, Enqueuer enqueuer, ScheduleConfig config, java.util.Set<String> kinds) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.enqueuer = enqueuer;
        this.rows = new ScheduleRows(dialect);
        java.util.Set<String> declared = new java.util.HashSet<>();
        config.declared().forEach(d -> declared.add(d.name()));
        this.held = new HeldSchedules(jdbc, dialect, rows, declared, kinds, config.clock());
        String firable = HeldSchedules.firable("", declared.size(), kinds.size());
        this.clock = config.clock();
        this.batch = config.batch();
        this.pollMillis = config.pollInterval().toMillis();
        this.nowExpr = clock == null ? dialect.now() : "?";
        String fixedDelay = "trigger_type = '" + Trigger.Type.FIXED_DELAY.name() + "'";
        // A schedule declared in code is fired only by the engines that declare it or handle its kind
        // (see HeldSchedules).
        this.probeSql = "SELECT (SELECT MIN(next_slot) FROM dbtasks_schedule WHERE paused = FALSE AND " + firable
                + ") AS next_due,"
                + " (SELECT COUNT(*) FROM dbtasks_schedule WHERE next_slot IS NULL AND paused = FALSE AND "
                + fixedDelay + ") AS awaiting, " + nowExpr + " AS db_now";
        this.dueSql = "SELECT " + ScheduleRows.DEFINITION + ", " + nowExpr + " AS db_now FROM dbtasks_schedule s"
                + " WHERE s.next_slot <= " + nowExpr + " AND s.paused = FALSE AND "
                + HeldSchedules.firable("s", declared.size(), kinds.size()) + " ORDER BY s.next_slot LIMIT ?"
                + dialect.forUpdateSkipLocked();
        // PostgreSQL cannot type a bare parameter of CONCAT (it takes "any"); the others can.
        String text = dialect.name().equals("postgresql") ? "CAST(? AS TEXT)" : "?";
        String set = "UPDATE dbtasks_schedule SET next_slot = ?, ";
        String guard = "paused = ?, version = version + 1, updated_at = " + dialect.now() + " WHERE next_slot = ? AND"
                + " name IN (";
        this.advanceSql = set + guard;
        this.advanceWithSlotSql =
                set + "last_slot = ?, last_task_key = CONCAT(" + text + ", name, " + text + "), " + guard;
        this.awaitingSql = "SELECT s.name, s.version, s.period_ms, t.status, t.finished_at, " + nowExpr
                + " AS db_now FROM dbtasks_schedule s LEFT JOIN dbtasks_task t ON t.idempotency_key = s.last_task_key"
                + " WHERE s.next_slot IS NULL AND s.paused = FALSE AND s." + fixedDelay;
        this.releaseSql = "UPDATE dbtasks_schedule SET next_slot = ?, version = version + 1, updated_at = "
                + dialect.now() + " WHERE name = ? AND version = ? AND next_slot IS NULL AND paused = FALSE";
    }

    /** Starts the poll loop on a daemon thread. */
    public void start(String workerId) {
        running = true;
        thread = new Thread(this::loop, "dbtasks-schedules-" + workerId);
        thread.setDaemon(true);
        thread.start();
    }

    /** Stops the loop and waits for a poll in flight to end (its transaction commits or rolls back). */
    public void stop() {
        running = false;
        wakeUp();
        Thread t = thread;
        if (t != null) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Makes a sleeping loop poll at once (a local change to a schedule may have an earlier slot). */
    public void wakeUp() {
        lock.lock();
        try {
            wake = true;
            woken.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void loop() {
        while (running) {
            long waitMillis;
            try {
                waitMillis = pollOnce();
            } catch (RuntimeException e) {
                log.warn("Polling schedules failed; retrying in {} ms: {}", pollMillis, e.getMessage());
                waitMillis = pollMillis;
            }
            sleep(waitMillis);
        }
    }

    private void sleep(long millis) {
        if (millis <= 0) {
            return;
        }
        lock.lock();
        try {
            long nanos = TimeUnit.MILLISECONDS.toNanos(millis);
            while (!wake && running && nanos > 0) {
                nanos = woken.awaitNanos(nanos);
            }
            wake = false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        } finally {
            lock.unlock();
        }
    }

    /** One probe and what it calls for. @return how long to sleep before the next, in ms */
    long pollOnce() {
        if (System.nanoTime() - nextHeldCheck >= 0) {
            nextHeldCheck = System.nanoTime() + HELD_CHECK_NANOS;
            held.check();
        }
        Probe p = probe();
        if (p.awaiting > 0) {
            releaseFinishedDelays();
        }
        if (p.nextDue == null) {
            return pollMillis;
        }
        long until = Duration.between(p.now, p.nextDue).toMillis();
        if (until > 0) {
            return Math.min(pollMillis, until);
        }
        return fireAll() > 0 ? 0 : Math.min(pollMillis, CONTENDED_WAIT_MILLIS);
    }

    /** Fires due slots until none is left that this engine can lock. @return schedules advanced */
    public int enqueueDue() {
        held.check();
        releaseFinishedDelays();
        int tasks = 0;
        while (true) {
            Fired f = fireBatch();
            tasks += f.tasks;
            if (f.rows < batch) {
                return tasks;
            }
        }
    }

    private int fireAll() {
        int advanced = 0;
        while (running) {
            Fired f = fireBatch();
            advanced += f.rows;
            if (f.rows < batch) {
                break;
            }
        }
        return advanced;
    }

    private record Probe(Instant nextDue, long awaiting, Instant now) {}

    private Probe probe() {
        return jdbc.withConnection("Probing schedules", c -> {
            try (PreparedStatement ps = c.prepareStatement(probeSql)) {
                bindNow(ps, held.bindDeclared(ps, 1));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return new Probe(
                            dialect.getInstant(rs, "next_due"),
                            rs.getLong("awaiting"),
                            dialect.getInstant(rs, "db_now"));
                }
            }
        });
    }

    private int bindNow(PreparedStatement ps, int index) throws SQLException {
        if (clock != null) {
            dialect.setInstant(ps, index, clock.instant());
            return index + 1;
        }
        return index;
    }

    private record Fired(int rows, int tasks) {}

    /**
     * How one row moves: from its next slot {@code from} to {@code next}, with {@code lastSlot} (or
     * {@code null}) as its latest enqueued slot; {@code park} pauses a row that cannot be planned.
     */
    private record Advance(String name, long version, Instant from, Instant next, Instant lastSlot, boolean park) {
        Group group() {
            return new Group(from, next, lastSlot, park);
        }
    }

    /** Rows that move alike (one cron, one slot) and are advanced by one UPDATE. */
    private record Group(Instant from, Instant next, Instant lastSlot, boolean park) {}

    private Fired fireBatch() {
        List<Enqueuer.KeyedInsert> inserted = new ArrayList<>(1);
        Fired fired;
        try {
            fired = jdbc.inTransaction("Enqueueing due schedule slots", c -> {
                dialect.readCommittedTransaction(c);
                List<TaskRequest> requests = new ArrayList<>();
                List<String> payloads = new ArrayList<>();
                List<Advance> advances = new ArrayList<>();
                Map<PlanKey, SlotPlanner.Plan> plans = new HashMap<>();
                try (PreparedStatement ps = c.prepareStatement(dueSql)) {
                    int i = bindNow(ps, 1);
                    i = bindNow(ps, i);
                    i = held.bindDeclared(ps, i);
                    ps.setInt(i, batch);
                    try (ResultSet rs = ps.executeQuery()) {
                        Instant now = null;
                        while (rs.next()) {
                            if (now == null) {
                                // One now for the batch: the rows were read by one statement.
                                now = dialect.getInstant(rs, "db_now");
                            }
                            plan(rs, now, plans, requests, payloads, advances);
                        }
                    }
                }
                Enqueuer.KeyedInsert insert = enqueuer.insertKeyed(c, requests, payloads);
                inserted.add(insert);
                advance(c, advances);
                return new Fired(advances.size(), insert.inserted());
            });
        } catch (RuntimeException e) {
            inserted.forEach(Enqueuer.KeyedInsert::rolledBack);
            throw e;
        }
        inserted.forEach(Enqueuer.KeyedInsert::committed);
        return fired;
    }

    /** What a plan depends on: schedules that share it (one cron, one slot) are planned once. */
    private record PlanKey(Trigger trigger, Instant next, MissedSlots policy, long thresholdMillis) {}

    private void plan(
            ResultSet rs,
            Instant now,
            Map<PlanKey, SlotPlanner.Plan> plans,
            List<TaskRequest> requests,
            List<String> payloads,
            List<Advance> advances)
            throws SQLException {
        String name = rs.getString("name");
        long version = rs.getLong("version");
        Trigger trigger;
        try {
            trigger = rows.trigger(rs);
        } catch (RuntimeException e) {
            // A row written by hand with a bad cron: park it (paused) instead of failing every poll.
            log.error(
                    "Schedule {} has an invalid trigger and is paused; fix it with schedules().update(...): {}",
                    name,
                    e.getMessage());
            advances.add(new Advance(name, version, dialect.getInstant(rs, "next_slot"), null, null, true));
            return;
        }
        PlanKey key = new PlanKey(
                trigger, dialect.getInstant(rs, "next_slot"), rows.missedSlots(rs), rs.getLong("misfire_threshold_ms"));
        SlotPlanner.Plan plan = plans.computeIfAbsent(
                key, k -> SlotPlanner.plan(k.trigger, k.next, now, k.policy, Duration.ofMillis(k.thresholdMillis)));
        Instant last = null;
        int maxAttempts = rs.getInt("task_max_attempts");
        boolean defaultAttempts = rs.wasNull();
        for (Instant slot : plan.slots()) {
            last = slot;
            TaskRequest.Builder b = TaskRequest.builder(rs.getString("task_kind"))
                    .queue(rs.getString("task_queue"))
                    .priority(rs.getInt("task_priority"))
                    .idempotencyKey(Schedule.slotKey(name, slot))
                    .name(name)
                    .reference(slot.toString())
                    .runAt(slot);
            if (!defaultAttempts) {
                b.maxAttempts(maxAttempts);
            }
            requests.add(b.build());
            payloads.add(rs.getString("task_payload"));
        }
        if (plan.slots().isEmpty() && plan.nextSlot() == null && trigger.type() != Trigger.Type.FIXED_DELAY) {
            log.info("Schedule {} ({}) fires no more", name, trigger);
        }
        advances.add(new Advance(name, version, key.next, plan.nextSlot(), last, false));
    }

    /**
     * Advances the locked rows with one UPDATE per group of rows that move alike, guarded by their
     * next slot (compare-and-set: a row moves only from the slot it was planned from). Under the row
     * locks every row must match; a shortfall is a bug and rolls the whole batch back, tasks too.
     */
    private void advance(Connection c, List<Advance> advances) throws SQLException {
        Map<Group, List<String>> groups = new java.util.LinkedHashMap<>();
        for (Advance a : advances) {
            groups.computeIfAbsent(a.group(), g -> new ArrayList<>()).add(a.name);
        }
        for (Map.Entry<Group, List<String>> e : groups.entrySet()) {
            Group g = e.getKey();
            List<String> names = e.getValue();
            for (int from = 0; from < names.size(); from += MAX_NAMES) {
                List<String> part = names.subList(from, Math.min(names.size(), from + MAX_NAMES));
                String sql = (g.lastSlot == null ? advanceSql : advanceWithSlotSql)
                        + String.join(", ", java.util.Collections.nCopies(part.size(), "?")) + ")";
                try (PreparedStatement ps = c.prepareStatement(sql)) {
                    int i = 1;
                    dialect.setInstant(ps, i++, g.next);
                    if (g.lastSlot != null) {
                        String key = Schedule.slotKey("", g.lastSlot);
                        int at = key.indexOf('@');
                        dialect.setInstant(ps, i++, g.lastSlot);
                        ps.setString(i++, key.substring(0, at)); // "schedule:" + name + "@<slot>"
                        ps.setString(i++, key.substring(at));
                    }
                    ps.setBoolean(i++, g.park);
                    dialect.setInstant(ps, i++, g.from);
                    for (String name : part) {
                        ps.setString(i++, name);
                    }
                    int rows = ps.executeUpdate();
                    if (rows != part.size()) {
                        throw new SQLException("Advancing " + part.size() + " schedules from slot " + g.from
                                + " matched " + rows + " rows; a locked row changed, which is a bug");
                    }
                }
            }
        }
    }

    /** Gives each fixed delay whose latest task has finished its next slot. */
    private void releaseFinishedDelays() {
        jdbc.withConnection("Releasing fixed-delay schedules", c -> {
            List<Advance> release = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(awaitingSql)) {
                bindNow(ps, 1);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String status = rs.getString("status");
                        Instant now = dialect.getInstant(rs, "db_now");
                        Instant next;
                        if (status == null) {
                            next = now; // never ran, or its task was deleted
                        } else if (TaskStatus.valueOf(status).isFinal()) {
                            Instant finished = dialect.getInstant(rs, "finished_at");
                            next = (finished != null ? finished : now).plusMillis(rs.getLong("period_ms"));
                        } else {
                            continue; // still PENDING or RUNNING
                        }
                        release.add(new Advance(
                                rs.getString("name"),
                                rs.getLong("version"),
                                null,
                                next.truncatedTo(java.time.temporal.ChronoUnit.MILLIS),
                                null,
                                false));
                    }
                }
            }
            for (Advance a : release) {
                try (PreparedStatement ps = c.prepareStatement(releaseSql)) {
                    dialect.setInstant(ps, 1, a.next);
                    ps.setString(2, a.name);
                    ps.setLong(3, a.version);
                    ps.executeUpdate(); // 0 rows: another engine released it first
                }
            }
            return null;
        });
    }
}
