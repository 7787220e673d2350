package io.dbtasks.internal.query;

import io.dbtasks.Attempt;
import io.dbtasks.AttemptOutcome;
import io.dbtasks.Page;
import io.dbtasks.Task;
import io.dbtasks.TaskFilter;
import io.dbtasks.TaskStats;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** Read-only queries for operators and the REST API. */
public final class TaskQueries {
    private final Jdbc jdbc;
    private final Dialect dialect;
    private final TaskRows rows;
    private final TaskSearches searches;

    public TaskQueries(Jdbc jdbc, Dialect dialect) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.rows = new TaskRows(dialect);
        this.searches = new TaskSearches(jdbc, dialect);
    }

    /** @return keyset searches, the overview aggregates and the toolkit's read-only views */
    public TaskSearches searches() {
        return searches;
    }

    public Optional<Task> find(long id) {
        return jdbc.withConnection("Find task " + id, c -> {
            try (PreparedStatement ps =
                    c.prepareStatement("SELECT " + Dialect.TASK_COLUMNS + " FROM dbtasks_task WHERE id = ?")) {
                ps.setLong(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(rows.task(rs)) : Optional.empty();
                }
            }
        });
    }

    public Optional<Task> findByKey(String key) {
        return jdbc.withConnection("Find task by key", c -> {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT " + Dialect.TASK_COLUMNS + " FROM dbtasks_task WHERE idempotency_key = ?")) {
                ps.setString(1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(rows.task(rs)) : Optional.empty();
                }
            }
        });
    }

    public Page<Task> list(TaskFilter filter, int page, int size) {
        if (page < 0) {
            throw new IllegalArgumentException("page must be 0 or more, got " + page);
        }
        if (size < 1 || size > 1000) {
            throw new IllegalArgumentException("size must be 1 to 1000, got " + size);
        }
        TaskFilter f = filter == null ? TaskFilter.ALL : filter;
        List<Object> args = new ArrayList<>();
        StringBuilder where = new StringBuilder(" WHERE 1 = 1");
        if (f.status() != null) {
            where.append(" AND status = ?");
            args.add(f.status().name());
        }
        if (f.queue() != null) {
            where.append(" AND queue = ?");
            args.add(f.queue());
        }
        if (f.kind() != null) {
            where.append(" AND kind = ?");
            args.add(f.kind());
        }
        return jdbc.withConnection("List tasks", c -> {
            long total;
            try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM dbtasks_task" + where)) {
                bindAll(ps, args);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    total = rs.getLong(1);
                }
            }
            List<Task> items = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT " + Dialect.TASK_COLUMNS + " FROM dbtasks_task"
                    + where + " ORDER BY id DESC LIMIT ? OFFSET ?")) {
                int i = bindAll(ps, args);
                ps.setInt(i++, size);
                ps.setLong(i, (long) page * size);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        items.add(rows.task(rs));
                    }
                }
            }
            return new Page<>(items, page, size, total);
        });
    }

    public List<Attempt> attempts(long taskId) {
        return jdbc.withConnection("List attempts of task " + taskId, c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT id, task_id, attempt, worker, lease_token,"
                    + " started_at, finished_at, duration_ms, outcome, error_class, error_message, stack_trace"
                    + " FROM dbtasks_attempt WHERE task_id = ? ORDER BY attempt, id")) {
                ps.setLong(1, taskId);
                List<Attempt> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(new Attempt(
                                rs.getLong("id"),
                                rs.getLong("task_id"),
                                rs.getInt("attempt"),
                                rs.getString("worker"),
                                rs.getLong("lease_token"),
                                dialect.getInstant(rs, "started_at"),
                                dialect.getInstant(rs, "finished_at"),
                                Duration.ofMillis(rs.getLong("duration_ms")),
                                AttemptOutcome.valueOf(rs.getString("outcome")),
                                rs.getString("error_class"),
                                rs.getString("error_message"),
                                rs.getString("stack_trace")));
                    }
                }
                return out;
            }
        });
    }

    public TaskStats stats() {
        return jdbc.withConnection("Count tasks", c -> {
            Map<TaskStatus, Long> tasks = zeros(TaskStatus.class);
            Map<AttemptOutcome, Long> attempts = zeros(AttemptOutcome.class);
            Map<String, Map<TaskStatus, Long>> queueTasks = new TreeMap<>();
            Map<String, Map<AttemptOutcome, Long>> queueAttempts = new TreeMap<>();
            try (PreparedStatement ps = c.prepareStatement(
                            "SELECT queue, status, COUNT(*) FROM dbtasks_task GROUP BY queue, status");
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    TaskStatus s = TaskStatus.valueOf(rs.getString(2));
                    long n = rs.getLong(3);
                    tasks.merge(s, n, Long::sum);
                    queueTasks
                            .computeIfAbsent(rs.getString(1), q -> zeros(TaskStatus.class))
                            .merge(s, n, Long::sum);
                }
            }
            try (PreparedStatement ps = c.prepareStatement(
                            "SELECT queue, outcome, COUNT(*) FROM dbtasks_attempt GROUP BY queue, outcome");
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    AttemptOutcome o = AttemptOutcome.valueOf(rs.getString(2));
                    long n = rs.getLong(3);
                    attempts.merge(o, n, Long::sum);
                    queueAttempts
                            .computeIfAbsent(rs.getString(1), q -> zeros(AttemptOutcome.class))
                            .merge(o, n, Long::sum);
                }
            }
            Map<String, TaskStats.QueueStats> queues = new TreeMap<>();
            for (String q : queueTasks.keySet()) {
                queues.put(
                        q,
                        new TaskStats.QueueStats(
                                queueTasks.get(q), queueAttempts.getOrDefault(q, zeros(AttemptOutcome.class))));
            }
            for (String q : queueAttempts.keySet()) {
                queues.putIfAbsent(q, new TaskStats.QueueStats(zeros(TaskStatus.class), queueAttempts.get(q)));
            }
            return new TaskStats(tasks, attempts, queues);
        });
    }

    /**
     * PENDING, RUNNING, FAILED and WAITING counts per queue, with the due-now count and the oldest
     * due task's run-at: one statement of four index-served branches (the claim, rescue,
     * unsuccessful-task and waiting-step indexes on PostgreSQL; the status index on MariaDB), then
     * the database's now.
     */
    public List<io.dbtasks.QueueDepth> queueDepths() {
        return jdbc.withConnection("Measure queue depths", c -> {
            StringBuilder sql = new StringBuilder();
            for (TaskStatus s :
                    List.of(TaskStatus.PENDING, TaskStatus.RUNNING, TaskStatus.FAILED, TaskStatus.WAITING)) {
                if (sql.length() > 0) {
                    sql.append(" UNION ALL ");
                }
                String due = s == TaskStatus.PENDING ? "run_at <= " + dialect.now() : "1 = 0";
                sql.append("SELECT queue, '")
                        .append(s.name())
                        .append("' AS status, COUNT(*) AS n, SUM(CASE WHEN ")
                        .append(due)
                        .append(" THEN 1 ELSE 0 END) AS due, MIN(CASE WHEN ")
                        .append(due)
                        .append(" THEN run_at END) AS oldest_due FROM dbtasks_task WHERE status = '")
                        .append(s.name())
                        .append("' GROUP BY queue");
            }
            Map<String, long[]> counts = new TreeMap<>();
            Map<String, java.time.Instant> oldest = new java.util.HashMap<>();
            try (PreparedStatement ps = c.prepareStatement(sql.toString());
                    ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long[] n = counts.computeIfAbsent(rs.getString("queue"), q -> new long[5]);
                    TaskStatus s = TaskStatus.valueOf(rs.getString("status").trim());
                    n[
                                    switch (s) {
                                        case PENDING -> 0;
                                        case RUNNING -> 1;
                                        case FAILED -> 2;
                                        default -> 4;
                                    }] =
                            rs.getLong("n");
                    if (s == TaskStatus.PENDING) {
                        n[3] = rs.getLong("due");
                        java.time.Instant o = dialect.getInstant(rs, "oldest_due");
                        if (o != null) {
                            oldest.put(rs.getString("queue"), o);
                        }
                    }
                }
            }
            java.time.Instant now;
            try (PreparedStatement ps = c.prepareStatement("SELECT " + dialect.now() + " AS db_now");
                    ResultSet rs = ps.executeQuery()) {
                rs.next();
                now = dialect.getInstant(rs, "db_now");
            }
            List<io.dbtasks.QueueDepth> out = new ArrayList<>(counts.size());
            counts.forEach((q, n) -> {
                java.time.Instant o = oldest.get(q);
                Duration age = o == null || now.isBefore(o) ? Duration.ZERO : Duration.between(o, now);
                out.add(new io.dbtasks.QueueDepth(q, n[0], n[1], n[2], n[3], age, n[4]));
            });
            return out;
        });
    }

    private static <E extends Enum<E>> Map<E, Long> zeros(Class<E> type) {
        Map<E, Long> m = new EnumMap<>(type);
        for (E e : type.getEnumConstants()) {
            m.put(e, 0L);
        }
        return m;
    }

    private static int bindAll(PreparedStatement ps, List<Object> args) throws SQLException {
        int i = 1;
        for (Object a : args) {
            ps.setObject(i++, a);
        }
        return i;
    }
}
