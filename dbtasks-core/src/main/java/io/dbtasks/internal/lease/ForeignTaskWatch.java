package io.dbtasks.internal.lease;

import io.dbtasks.ForeignTasks;
import io.dbtasks.TaskStatus;
import io.dbtasks.event.TaskEvent;
import io.dbtasks.internal.completion.Dependents;
import io.dbtasks.internal.completion.TaskUpdate;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.query.QueueControl;
import io.dbtasks.internal.support.Capabilities;
import io.dbtasks.internal.support.EngineConfig;
import io.dbtasks.internal.support.Events;
import io.dbtasks.internal.support.Jdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the due tasks of this engine's queues that it does not claim (foreign tasks: a kind it has
 * no handler for, a job target it does not allow-list), and fails those that no live engine can
 * run once that has lasted the grace period.
 *
 * <p>The rule. A claim takes only what its engine can run ({@link Capabilities}), so a foreign task
 * waits, untouched (no attempt used), for an engine that can. Each check reads the live engines'
 * worker rows (heartbeat within one lease, by the database clock) and the due PENDING tasks of this
 * engine's queues grouped by queue, kind and job target. A group is <em>runnable elsewhere</em> if a
 * live engine working its queue advertises the kind (and the target), or advertises nothing (an
 * engine of an older version, which claims every kind). A group that is runnable nowhere is failed
 * (FAILED, with the reason in {@code last_error}) once this engine has seen it so, without a break,
 * for the whole grace period; any check in between that finds an engine able to run it starts the
 * period again. A rolling deploy that brings a new kind to some engines first thus loses nothing:
 * its tasks wait while any live engine of the queue has the kind, and, while none has it yet, for
 * the grace period. Each engine times the period itself, from its own checks, so a restart only
 * delays a failure; the failing UPDATE is guarded by PENDING, so two engines never both fail a task.
 *
 * <p>Each (queue, kind, target) is logged once per engine, as a warning that says whether another
 * live engine runs it or none can. {@link #snapshot()} holds the last check's groups.
 *
 * <p>Thread-safe: {@link #check()} runs on the engine's scheduler, one at a time; the snapshot is
 * one volatile reference.
 */
public final class ForeignTaskWatch {
    /** The least time after its last heartbeat that another engine counts as live. */
    private static final Duration MIN_LIVE_WINDOW = Duration.ofMinutes(2);

    private static final Logger log = LoggerFactory.getLogger(ForeignTaskWatch.class);
    /** Tasks failed per group per check, in one transaction. */
    static final int FAIL_BATCH = 500;
    /** The longest pause between checks. */
    static final Duration MAX_INTERVAL = Duration.ofSeconds(30);

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final Capabilities own;
    private final EngineConfig config;
    private final Duration grace;
    private final Events events;
    private final TaskUpdate fail;
    private final Dependents dependents;
    /** Per group key, when (System.nanoTime) this engine first saw it runnable nowhere. */
    private final Map<Group, Long> runnableNowhereSince = new HashMap<>();
    /** Groups already logged, so that each is logged once. */
    private final Set<Group> logged = Collections.synchronizedSet(new java.util.HashSet<>());

    private volatile List<ForeignTasks> snapshot = List.of();

    private record Group(String queue, String kind, String jobTarget) {}

    private record Live(String workerId, Set<String> queues, Set<String> kinds, Set<String> jobTargets) {}

    /**
     * @param grace how long a group must stay runnable nowhere before it is failed; zero never fails
     * @param dependents ends the dependents of the workflow steps it fails, in the same transaction
     */
    public ForeignTaskWatch(
            Jdbc jdbc,
            Dialect dialect,
            Capabilities own,
            EngineConfig config,
            Duration grace,
            Events events,
            Dependents dependents) {
        this.jdbc = jdbc;
        this.dependents = dependents;
        this.dialect = dialect;
        this.own = own;
        this.config = config;
        this.grace = Objects.requireNonNull(grace, "grace");
        this.events = events;
        this.fail = new TaskUpdate(dialect)
                .to(TaskStatus.FAILED)
                .set("last_error = ?")
                .whereIn(TaskStatus.PENDING)
                .and("id = ?");
    }

    /** @return how often to check: a quarter of the grace period, between 50 ms and 30 s */
    public Duration interval() {
        if (grace.isZero()) {
            return MAX_INTERVAL;
        }
        long quarter = grace.toMillis() / 4;
        return Duration.ofMillis(Math.max(50, Math.min(MAX_INTERVAL.toMillis(), quarter)));
    }

    /** @return the last check's foreign groups */
    public List<ForeignTasks> snapshot() {
        return snapshot;
    }

    /** One check; errors are logged and the next check tries again. */
    public void check() {
        try {
            checkOnce();
        } catch (RuntimeException e) {
            log.warn("Checking for tasks this engine cannot run failed; retrying in {}", interval(), e);
        }
    }

    private void checkOnce() {
        if (config.queues().isEmpty()) {
            return;
        }
        List<Live> live = liveEngines();
        List<ForeignTasks> found = new ArrayList<>();
        Set<Group> nowhere = new java.util.HashSet<>();
        jdbc.withConnection("Find tasks this engine cannot run", c -> {
            try (PreparedStatement ps = c.prepareStatement(groupsSql())) {
                int i = 1;
                for (String q : new TreeSet<>(config.queues().keySet())) {
                    ps.setString(i++, q);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String queue = rs.getString("queue");
                        String kind = rs.getString("kind");
                        String target = rs.getString("job_target");
                        if (own.canRun(kind, target)) {
                            continue;
                        }
                        boolean elsewhere = live.stream()
                                .anyMatch(w -> w.queues().contains(queue)
                                        && Capabilities.canRun(w.kinds(), w.jobTargets(), kind, target));
                        found.add(new ForeignTasks(
                                queue, kind, target, rs.getLong("n"), elsewhere, dialect.getInstant(rs, "oldest")));
                        if (!elsewhere) {
                            nowhere.add(new Group(queue, kind, target));
                        }
                    }
                }
            }
            return null;
        });
        snapshot = List.copyOf(found);
        long now = System.nanoTime();
        runnableNowhereSince.keySet().retainAll(nowhere);
        for (ForeignTasks f : found) {
            Group g = new Group(f.queue(), f.kind(), f.jobTarget());
            if (logged.add(g)) {
                logFirst(f, live);
            }
            if (f.runnableElsewhere()) {
                continue;
            }
            long since = runnableNowhereSince.computeIfAbsent(g, k -> now);
            if (!grace.isZero() && now - since >= grace.toNanos()) {
                failGroup(g, live);
            }
        }
    }

    private String groupsSql() {
        String queues = String.join(", ", Collections.nCopies(config.queues().size(), "?"));
        return "SELECT queue, kind, job_target, COUNT(*) AS n, MIN(run_at) AS oldest FROM dbtasks_task WHERE "
                + TaskUpdate.is("status", TaskStatus.PENDING) + " AND run_at <= " + dialect.now()
                + " AND queue IN (" + queues + ") GROUP BY queue, kind, job_target";
    }

    /**
     * How long after its last heartbeat another engine still counts as live: other engines may have
     * a longer lease, so heartbeat less often than this one, and calling a live one dead would fail
     * its tasks; calling a dead one live only delays that.
     */
    private Duration liveWindow() {
        Duration threeLeases = config.lease().multipliedBy(3);
        return threeLeases.compareTo(MIN_LIVE_WINDOW) > 0 ? threeLeases : MIN_LIVE_WINDOW;
    }

    private List<Live> liveEngines() {
        return jdbc.withConnection("Read live engines", c -> {
            List<Live> list = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT worker_id, queues, kinds, job_targets"
                    + " FROM dbtasks_worker WHERE heartbeat_at > " + dialect.nowPlusMillis())) {
                ps.setLong(1, -liveWindow().toMillis());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        list.add(new Live(
                                rs.getString("worker_id"),
                                QueueControl.decode(rs.getString("queues")).keySet(),
                                Capabilities.decode(rs.getString("kinds")),
                                Capabilities.decode(rs.getString("job_targets"))));
                    }
                }
            }
            return list;
        });
    }

    private static String what(String kind, String target) {
        return target == null ? "kind '" + kind + "'" : "job target " + target + " (kind '" + kind + "')";
    }

    private void logFirst(ForeignTasks f, List<Live> live) {
        String what = what(f.kind(), f.jobTarget());
        if (f.runnableElsewhere()) {
            log.warn(
                    "dbtasks {}: queue '{}' has {} due task(s) of {} that this engine cannot run; it leaves them"
                            + " to the live engines that can (logged once)",
                    config.workerId(),
                    f.queue(),
                    f.tasks(),
                    what);
        } else {
            log.warn(
                    "dbtasks {}: queue '{}' has {} due task(s) of {} that no live engine of the queue can run"
                            + " (live engines: {}); they wait{}. {}",
                    config.workerId(),
                    f.queue(),
                    f.tasks(),
                    what,
                    live.stream().map(Live::workerId).toList(),
                    grace.isZero() ? "" : " and end FAILED if none can for " + grace,
                    remedy(f.queue(), f.kind(), f.jobTarget()));
        }
    }

    private static String remedy(String queue, String kind, String target) {
        return target == null
                ? "Register a handler for '" + kind + "' on an engine that works queue '" + queue + "'"
                : "Allow-list " + target + " on an engine that works queue '" + queue + "' (Spring: annotate the"
                        + " method with @TaskMethod or list it in dbtasks.jobs.allowed-methods; plain Java:"
                        + " JobMethodRegistry.register)";
    }

    /** The live engines' targets with the same bean and method but other parameter types, if any. */
    private static String sameName(Group g, List<Live> live) {
        if (g.jobTarget() == null || g.jobTarget().indexOf('(') < 0) {
            return "";
        }
        String prefix = g.jobTarget().substring(0, g.jobTarget().indexOf('(') + 1);
        List<String> similar = live.stream()
                .filter(w -> w.queues().contains(g.queue()) && w.jobTargets() != null)
                .flatMap(w -> w.jobTargets().stream())
                .filter(t -> t.startsWith(prefix))
                .distinct()
                .sorted()
                .toList();
        return similar.isEmpty()
                ? ""
                : "; it does not match the parameter types of the allow-listed " + String.join(" or ", similar);
    }

    private void failGroup(Group g, List<Live> live) {
        String reason = "No live engine of queue '" + g.queue() + "' can run " + what(g.kind(), g.jobTarget())
                + " (live engines: " + live.stream().map(Live::workerId).toList() + ") for " + grace
                + ", so it failed without running" + sameName(g, live) + ". "
                + remedy(g.queue(), g.kind(), g.jobTarget()) + ", then retry the task";
        Set<String> released = java.util.concurrent.ConcurrentHashMap.newKeySet();
        List<TaskEvent> failed = jdbc.inTransaction("Fail tasks no engine can run", c -> {
            dialect.readCommittedTransaction(c);
            List<long[]> rows = candidates(c, g);
            List<TaskEvent> events = new ArrayList<>();
            Map<Long, TaskStatus> ended = new java.util.TreeMap<>();
            for (long[] row : rows) {
                if (TaskUpdate.checked(fail.run(c, reason, row[0]), "failing task " + row[0])) {
                    events.add(this.events.event(
                            TaskEvent.Type.FAILED, row[0], g.kind(), g.queue(), (int) row[1], null, reason));
                    ended.put(row[0], TaskStatus.FAILED);
                }
            }
            // A failed workflow step ends its dependents as any other failure does.
            dependents.ended(c, ended, released);
            return events;
        });
        dependents.wake(released);
        if (!failed.isEmpty()) {
            log.warn("dbtasks {}: failed {} task(s): {}", config.workerId(), failed.size(), reason);
        }
        failed.forEach(events::publish);
    }

    /** Locks the group's due PENDING tasks no one else holds; each as {id, attempt}. */
    private List<long[]> candidates(Connection c, Group g) throws SQLException {
        String sql = "SELECT id, attempt FROM dbtasks_task WHERE queue = ? AND kind = ? AND "
                + (g.jobTarget() == null ? "job_target IS NULL" : "job_target = ?") + " AND "
                + TaskUpdate.is("status", TaskStatus.PENDING) + " AND run_at <= " + dialect.now()
                + " ORDER BY id LIMIT " + FAIL_BATCH + dialect.forUpdateSkipLocked();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, g.queue());
            ps.setString(2, g.kind());
            if (g.jobTarget() != null) {
                ps.setString(3, g.jobTarget());
            }
            List<long[]> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(new long[] {rs.getLong(1), rs.getInt(2)});
                }
            }
            return rows;
        }
    }
}
