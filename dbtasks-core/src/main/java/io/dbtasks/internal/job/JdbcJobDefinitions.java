package io.dbtasks.internal.job;

import io.dbtasks.EnqueueResult;
import io.dbtasks.RetryPolicy;
import io.dbtasks.StoredText;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.job.DuplicateJobException;
import io.dbtasks.job.JobDefinition;
import io.dbtasks.job.JobDefinitions;
import io.dbtasks.job.JobDisabledException;
import io.dbtasks.job.JobNotFoundException;
import io.dbtasks.job.JobPage;
import io.dbtasks.job.JobRun;
import io.dbtasks.job.JobRunRecord;
import io.dbtasks.job.JobRunRecordPage;
import io.dbtasks.job.JobRunSummary;
import io.dbtasks.job.JobTarget;
import io.dbtasks.job.StoredJob;
import io.dbtasks.schedule.Schedule;
import io.dbtasks.schedule.Schedules;
import io.dbtasks.schedule.Trigger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;
import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * Job definitions in {@code dbtasks_job}; the run protocol is described on {@link JobDefinitions}.
 * A run, single or bulk, is one transaction per page: lock the page's definition rows ({@code FOR
 * UPDATE}, so concurrent runs of a definition queue up behind each other), read their last tasks'
 * states, enqueue a task for each enabled definition whose last run is not PENDING or RUNNING (nor
 * SUCCEEDED, unless asked to run succeeded ones again), then record each run on its definition
 * ({@code runs}, {@code last_task_id}) and in {@code dbtasks_job_run}, and write each new task's
 * {@code job_target}, so that only engines that allow-list the target claim it. The row lock is the guard against a second run, so the run tasks need no
 * idempotency key and a page's runs are inserted by the enqueuer's multi-row INSERTs.
 */
public final class JdbcJobDefinitions implements JobDefinitions {
    private static final int MAX_CODES = 10_000;
    /**
     * The size of {@code dbtasks_task.job_target}. A longer target is not written, so its run is
     * claimed by any engine that runs job definitions, and one that does not allow-list it fails it.
     */
    static final int MAX_TARGET_LENGTH = 1000;

    private static final TypeReference<List<String>> STRINGS = new TypeReference<>() {};
    private static final String JOB_COLUMNS = "j.id, j.code, j.name, j.description, j.business_type, j.business_id,"
            + " j.bean_name, j.method_name, j.parameter_types, j.arguments, j.queue, j.max_attempts, j.backoff,"
            + " j.backoff_initial_ms, j.backoff_max_ms, j.backoff_multiplier, j.backoff_jitter, j.cron, j.time_zone,"
            + " j.enabled, j.runs, j.last_task_id, j.created_at, j.updated_at";
    private static final String SELECT_WITH_LAST = "SELECT " + JOB_COLUMNS
            + ", t.status AS last_status, t.last_error AS last_error FROM dbtasks_job j"
            + " LEFT JOIN dbtasks_task t ON t.id = j.last_task_id";

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final JsonMapper mapper;
    private final BiFunction<Connection, List<TaskRequest>, List<EnqueueResult>> enqueue;
    private final Schedules schedules;

    /**
     * @param jdbc the engine's connections
     * @param dialect the database's dialect
     * @param mapper writes payloads and the parameter type lists
     * @param enqueue enqueues tasks on a connection, in its transaction
     * @param schedules the schedules of definitions with a cron
     */
    public JdbcJobDefinitions(
            Jdbc jdbc,
            Dialect dialect,
            JsonMapper mapper,
            BiFunction<Connection, List<TaskRequest>, List<EnqueueResult>> enqueue,
            Schedules schedules) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.mapper = mapper;
        this.enqueue = enqueue;
        this.schedules = schedules;
    }

    /**
     * Makes the definition's schedule match it: saved (created, or updated if its cron changed) for
     * an enabled definition with a cron, deleted otherwise. Runs after the definition's own write; if
     * it fails, the caller sees the error and saving the definition again repairs the schedule.
     */
    private StoredJob syncSchedule(StoredJob job) {
        String name = SCHEDULE_PREFIX + job.id();
        JobDefinition d = job.definition();
        Optional<Trigger> trigger = d.trigger();
        if (d.enabled() && trigger.isPresent()) {
            Schedule.Builder b =
                    Schedule.builder(name, trigger.get()).task(CRON_KIND).payload(new JobCronPayload(d.code()));
            if (d.queue() != null) {
                b.queue(d.queue());
            }
            schedules.save(b.build());
        } else {
            schedules.delete(name);
        }
        return job;
    }

    /**
     * Runs a definition for a schedule slot on the slot task's connection and transaction. A
     * definition deleted or disabled since the slot was enqueued is not run.
     *
     * @param c the slot task's transaction
     * @param code the definition's code
     * @throws SQLException if the database fails
     */
    public void runForSlot(Connection c, String code) throws SQLException {
        List<Row> rows = lockRows(c, "j.code = ?", List.of(code), "");
        if (rows.isEmpty() || !rows.get(0).definition().enabled()) {
            return;
        }
        runLocked(c, rows, new Counts(), true);
    }

    @Override
    public StoredJob create(JobDefinition d) {
        Objects.requireNonNull(d, "definition");
        String sql = "INSERT INTO dbtasks_job (code, name, description, business_type, business_id, bean_name,"
                + " method_name, parameter_types, arguments, queue, max_attempts, backoff, backoff_initial_ms,"
                + " backoff_max_ms, backoff_multiplier, backoff_jitter, cron, time_zone, enabled, runs, created_at,"
                + " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, " + dialect.now()
                + ", " + dialect.now() + ")";
        jdbc.withConnection("Creating job definition " + d.code(), c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, d.code());
                bindContent(ps, 2, d);
                ps.executeUpdate();
            } catch (SQLException e) {
                if (dialect.isUniqueViolation(e)) {
                    throw new DuplicateJobException(d.code());
                }
                throw e;
            }
            return null;
        });
        return syncSchedule(find(d.code()).orElseThrow(() -> new JobNotFoundException(d.code())));
    }

    @Override
    public StoredJob update(JobDefinition d) {
        Objects.requireNonNull(d, "definition");
        String sql = "UPDATE dbtasks_job SET name = ?, description = ?, business_type = ?, business_id = ?,"
                + " bean_name = ?, method_name = ?, parameter_types = ?, arguments = ?, queue = ?, max_attempts = ?,"
                + " backoff = ?, backoff_initial_ms = ?, backoff_max_ms = ?, backoff_multiplier = ?,"
                + " backoff_jitter = ?, cron = ?, time_zone = ?, enabled = ?, updated_at = " + dialect.now()
                + " WHERE code = ?";
        int rows = jdbc.withConnection("Updating job definition " + d.code(), c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                int next = bindContent(ps, 1, d);
                ps.setString(next, d.code());
                return ps.executeUpdate();
            }
        });
        if (!Jdbc.changedOne(rows, "Updating job definition " + d.code())) {
            throw new JobNotFoundException(d.code());
        }
        return syncSchedule(find(d.code()).orElseThrow(() -> new JobNotFoundException(d.code())));
    }

    /** Binds every column but the code from {@code index} on; returns the next index. */
    private int bindContent(PreparedStatement ps, int index, JobDefinition d) throws SQLException {
        int i = index;
        ps.setString(i++, d.name());
        ps.setString(i++, d.description());
        ps.setString(i++, d.businessType());
        ps.setString(i++, d.businessId());
        ps.setString(i++, d.target().bean());
        ps.setString(i++, d.target().method());
        ps.setString(i++, writeTypes(d.target().parameterTypes()));
        ps.setString(i++, d.arguments());
        ps.setString(i++, d.queue());
        ps.setInt(i++, d.maxAttempts());
        RetryPolicy p = d.retryPolicy();
        ps.setString(i++, p.backoff().name());
        ps.setLong(i++, p.initial().toMillis());
        ps.setLong(i++, p.max().toMillis());
        ps.setDouble(i++, p.multiplier());
        ps.setDouble(i++, p.jitter());
        ps.setString(i++, d.cron());
        ps.setString(i++, d.timeZone());
        ps.setBoolean(i++, d.enabled());
        return i;
    }

    @Override
    public boolean delete(String code) {
        StoredText.requireText("code", Objects.requireNonNull(code, "code"));
        Optional<StoredJob> existing = find(code);
        if (existing.isEmpty()) {
            return false;
        }
        schedules.delete(SCHEDULE_PREFIX + existing.get().id());
        int rows = jdbc.withConnection("Deleting job definition " + code, c -> {
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_job WHERE code = ?")) {
                ps.setString(1, code);
                return ps.executeUpdate();
            }
        });
        return Jdbc.changedOne(rows, "Deleting job definition " + code);
    }

    @Override
    public Optional<StoredJob> find(String code) {
        StoredText.requireText("code", Objects.requireNonNull(code, "code"));
        return jdbc.withConnection("Reading job definition " + code, c -> {
            try (PreparedStatement ps = c.prepareStatement(SELECT_WITH_LAST + " WHERE j.code = ?")) {
                ps.setString(1, code);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(stored(rs)) : Optional.<StoredJob>empty();
                }
            }
        });
    }

    @Override
    public JobPage list(String businessType, Long afterId, int limit) {
        StoredText.requireText("businessType", businessType);
        if (limit < 1 || limit > 1000) {
            throw new IllegalArgumentException("limit must be 1 to 1000, got " + limit);
        }
        String sql = SELECT_WITH_LAST + " WHERE j.id > ?" + (businessType != null ? " AND j.business_type = ?" : "")
                + " ORDER BY j.id LIMIT " + (limit + 1);
        return jdbc.withConnection("Listing job definitions", c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setLong(1, afterId == null ? 0 : afterId);
                if (businessType != null) {
                    ps.setString(2, businessType);
                }
                List<StoredJob> items = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        items.add(stored(rs));
                    }
                }
                if (items.size() > limit) {
                    items = items.subList(0, limit);
                    return new JobPage(items, items.get(limit - 1).id());
                }
                return new JobPage(items, null);
            }
        });
    }

    @Override
    public JobRunRecordPage runs(String code, Long beforeRunNo, int limit) {
        StoredText.requireText("code", Objects.requireNonNull(code, "code"));
        if (limit < 1 || limit > 1000) {
            throw new IllegalArgumentException("limit must be 1 to 1000, got " + limit);
        }
        // The first attempt's start, not the task's started_at, which each claim overwrites.
        String sql = "SELECT r.run_no, r.task_id, r.created_at, t.status, t.attempt, t.started_at, t.finished_at,"
                + " t.last_error, (SELECT MIN(a.started_at) FROM dbtasks_attempt a WHERE a.task_id = r.task_id)"
                + " AS first_started_at FROM dbtasks_job_run r LEFT JOIN dbtasks_task t ON t.id = r.task_id"
                + " WHERE r.job_code = ?" + (beforeRunNo != null ? " AND r.run_no < ?" : "")
                + " ORDER BY r.run_no DESC, r.task_id DESC LIMIT " + (limit + 1);
        return jdbc.withConnection("Listing runs of job " + code, c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, code);
                if (beforeRunNo != null) {
                    ps.setLong(2, beforeRunNo);
                }
                List<JobRunRecord> items = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        items.add(runRecord(rs));
                    }
                }
                if (items.size() > limit) {
                    items = items.subList(0, limit);
                    return new JobRunRecordPage(items, items.get(limit - 1).runNo());
                }
                return new JobRunRecordPage(items, null);
            }
        });
    }

    private JobRunRecord runRecord(ResultSet rs) throws SQLException {
        String status = rs.getString("status");
        java.time.Instant started = dialect.getInstant(rs, "first_started_at");
        if (started == null) {
            started = dialect.getInstant(rs, "started_at");
        }
        TaskStatus outcome = status == null ? null : TaskStatus.valueOf(status);
        // A retried task keeps its previous attempt's finish until it ends again.
        java.time.Instant finished =
                outcome != null && outcome.isFinal() ? dialect.getInstant(rs, "finished_at") : null;
        int attempts = rs.getInt("attempt");
        return new JobRunRecord(
                rs.getLong("run_no"),
                rs.getLong("task_id"),
                dialect.getInstant(rs, "created_at"),
                started,
                finished,
                outcome,
                started != null && finished != null ? Duration.between(started, finished) : null,
                Math.max(0, attempts - 1),
                rs.getString("last_error"));
    }

    @Override
    public JobRun run(String code, boolean rerunSucceeded) {
        StoredText.requireText("code", Objects.requireNonNull(code, "code"));
        // Not found and disabled are answers, not database failures: decided after the transaction,
        // so they do not count against the engine's health.
        Single outcome = jdbc.inTransaction("Running job " + code, c -> {
            dialect.readCommittedTransaction(c);
            List<Row> rows = lockRows(c, "j.code = ?", List.of(code), "");
            if (rows.isEmpty()) {
                return new Single(null, false);
            }
            if (!rows.get(0).definition().enabled()) {
                return new Single(null, true);
            }
            return new Single(runLocked(c, rows, new Counts(), rerunSucceeded).get(0), true);
        });
        if (!outcome.found()) {
            throw new JobNotFoundException(code);
        }
        if (outcome.run() == null) {
            throw new JobDisabledException(code);
        }
        return outcome.run();
    }

    private record Single(JobRun run, boolean found) {}

    @Override
    public JobRunSummary runBusinessType(String businessType, boolean rerunSucceeded) {
        StoredText.requireText("businessType", Objects.requireNonNull(businessType, "businessType"));
        return pages(
                "j.business_type = ?",
                List.of(businessType),
                "Running jobs of business type " + businessType,
                rerunSucceeded);
    }

    @Override
    public JobRunSummary rerunFailed(String businessType) {
        StoredText.requireText("businessType", businessType);
        String where = "EXISTS (SELECT 1 FROM dbtasks_task t WHERE t.id = j.last_task_id AND t.status = "
                + Dialect.status(TaskStatus.FAILED) + ")";
        if (businessType != null) {
            return pages(
                    "j.business_type = ? AND " + where,
                    List.of(businessType),
                    "Re-running failed jobs of business type " + businessType,
                    false);
        }
        return pages(where, List.of(), "Re-running failed jobs", false);
    }

    @Override
    public JobRunSummary runCodes(Collection<String> codes, boolean rerunSucceeded) {
        Objects.requireNonNull(codes, "codes");
        List<String> distinct = new ArrayList<>(new LinkedHashSet<>(codes));
        for (int i = 0; i < distinct.size(); i++) {
            StoredText.requireText("codes[" + i + "]", Objects.requireNonNull(distinct.get(i), "codes[" + i + "]"));
        }
        if (distinct.size() > MAX_CODES) {
            throw new IllegalArgumentException(
                    "At most " + MAX_CODES + " codes per call, got " + distinct.size() + "; split the list");
        }
        Counts counts = new Counts();
        List<String> notFound = new ArrayList<>();
        for (int from = 0; from < distinct.size(); from += PAGE_SIZE) {
            List<String> page = distinct.subList(from, Math.min(distinct.size(), from + PAGE_SIZE));
            String in = "j.code IN (" + String.join(", ", java.util.Collections.nCopies(page.size(), "?")) + ")";
            List<String> found = jdbc.inTransaction("Running " + page.size() + " job(s) by code", c -> {
                dialect.readCommittedTransaction(c);
                List<Row> rows = lockRows(c, in, page, " ORDER BY j.id");
                runLocked(c, rows, counts, rerunSucceeded);
                return rows.stream().map(r -> r.definition().code()).toList();
            });
            counts.pages++;
            for (String code : page) {
                if (!found.contains(code)) {
                    notFound.add(code);
                }
            }
        }
        return counts.summary(notFound);
    }

    /** Runs the definitions matching {@code where}, keyset page by page, each in one transaction. */
    private JobRunSummary pages(String where, List<String> args, String what, boolean rerunSucceeded) {
        Counts counts = new Counts();
        long after = 0;
        while (true) {
            long from = after;
            List<Object> bound = new ArrayList<>(args);
            bound.add(from);
            Long last = jdbc.inTransaction(what, c -> {
                dialect.readCommittedTransaction(c);
                List<Row> rows = lockRows(c, where + " AND j.id > ?", bound, " ORDER BY j.id LIMIT " + PAGE_SIZE);
                if (rows.isEmpty()) {
                    return null;
                }
                runLocked(c, rows, counts, rerunSucceeded);
                return rows.get(rows.size() - 1).id();
            });
            if (last == null) {
                return counts.summary(List.of());
            }
            counts.pages++;
            after = last;
        }
    }

    /** A locked definition row. */
    private record Row(long id, JobDefinition definition, long runs, Long lastTaskId) {}

    private static final class Counts {
        int enqueued;
        int alreadyQueued;
        int alreadySucceeded;
        int disabled;
        int pages;

        JobRunSummary summary(List<String> notFound) {
            return new JobRunSummary(enqueued, alreadyQueued, alreadySucceeded, disabled, notFound, pages);
        }
    }

    private List<Row> lockRows(Connection c, String where, List<?> args, String tail) throws SQLException {
        String sql = "SELECT " + JOB_COLUMNS + " FROM dbtasks_job j WHERE " + where + tail + dialect.forUpdate();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.size(); i++) {
                ps.setObject(i + 1, args.get(i));
            }
            List<Row> rows = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(new Row(
                            rs.getLong("id"), definition(rs), rs.getLong("runs"), nullableLong(rs, "last_task_id")));
                }
            }
            return rows;
        }
    }

    /**
     * Enqueues a run of each enabled row whose last task is not PENDING or RUNNING, nor SUCCEEDED
     * unless {@code rerunSucceeded}, and records it.
     *
     * @return one run per enabled row, in order (duplicates for rows with a pending run, the last run
     *     for rows skipped as succeeded)
     */
    private List<JobRun> runLocked(Connection c, List<Row> rows, Counts counts, boolean rerunSucceeded)
            throws SQLException {
        Map<Long, TaskStatus> lastStatus = lastStatuses(c, rows);
        List<JobRun> runs = new ArrayList<>();
        List<Row> toRun = new ArrayList<>();
        List<TaskRequest> requests = new ArrayList<>();
        for (Row r : rows) {
            if (!r.definition().enabled()) {
                counts.disabled++;
                continue;
            }
            TaskStatus last = r.lastTaskId() == null ? null : lastStatus.get(r.lastTaskId());
            if (last == TaskStatus.PENDING || last == TaskStatus.RUNNING) {
                counts.alreadyQueued++;
                runs.add(new JobRun(r.definition().code(), r.lastTaskId(), r.runs(), true, false));
                continue;
            }
            if (last == TaskStatus.SUCCEEDED && !rerunSucceeded) {
                counts.alreadySucceeded++;
                runs.add(new JobRun(r.definition().code(), r.lastTaskId(), r.runs(), false, true));
                continue;
            }
            toRun.add(r);
            requests.add(request(r, r.runs() + 1));
        }
        if (requests.isEmpty()) {
            return runs;
        }
        List<EnqueueResult> results = enqueue.apply(c, requests);
        try (PreparedStatement update =
                        c.prepareStatement("UPDATE dbtasks_job SET runs = ?, last_task_id = ? WHERE id = ?");
                PreparedStatement insert = c.prepareStatement("INSERT INTO dbtasks_job_run (task_id, job_code, run_no,"
                        + " business_type, business_id, created_at) VALUES (?, ?, ?, ?, ?, " + dialect.now() + ")");
                PreparedStatement target = c.prepareStatement("UPDATE dbtasks_task SET job_target = ? WHERE id = ?")) {
            for (int i = 0; i < toRun.size(); i++) {
                Row r = toRun.get(i);
                EnqueueResult result = results.get(i);
                long taskId = result.task().id();
                if (result.duplicate()) {
                    counts.alreadyQueued++;
                    runs.add(new JobRun(r.definition().code(), taskId, r.runs() + 1, true, false));
                    continue;
                }
                counts.enqueued++;
                runs.add(new JobRun(r.definition().code(), taskId, r.runs() + 1, false, false));
                String signature = r.definition().target().toString();
                if (signature.length() <= MAX_TARGET_LENGTH) {
                    target.setString(1, signature);
                    target.setLong(2, taskId);
                    target.addBatch();
                }
                update.setLong(1, r.runs() + 1);
                update.setLong(2, taskId);
                update.setLong(3, r.id());
                update.addBatch();
                insert.setLong(1, taskId);
                insert.setString(2, r.definition().code());
                insert.setLong(3, r.runs() + 1);
                insert.setString(4, r.definition().businessType());
                insert.setString(5, r.definition().businessId());
                insert.addBatch();
            }
            update.executeBatch();
            insert.executeBatch();
            target.executeBatch();
        }
        return runs;
    }

    private Map<Long, TaskStatus> lastStatuses(Connection c, List<Row> rows) throws SQLException {
        List<Long> ids =
                rows.stream().map(Row::lastTaskId).filter(Objects::nonNull).toList();
        Map<Long, TaskStatus> statuses = new HashMap<>();
        if (ids.isEmpty()) {
            return statuses;
        }
        String sql = "SELECT id, status FROM dbtasks_task WHERE id IN ("
                + String.join(", ", java.util.Collections.nCopies(ids.size(), "?")) + ")";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < ids.size(); i++) {
                ps.setLong(i + 1, ids.get(i));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    statuses.put(rs.getLong(1), TaskStatus.valueOf(rs.getString(2)));
                }
            }
        }
        return statuses;
    }

    private TaskRequest request(Row r, long runNo) {
        JobDefinition d = r.definition();
        JobTaskPayload payload = new JobTaskPayload(
                d.code(),
                runNo,
                d.businessType(),
                d.businessId(),
                d.target().bean(),
                d.target().method(),
                d.target().parameterTypes(),
                d.arguments());
        return TaskRequest.builder(KIND)
                .payload(payload)
                .options(d.options())
                .name(d.code())
                .reference(d.businessId())
                .build();
    }

    private StoredJob stored(ResultSet rs) throws SQLException {
        String status = rs.getString("last_status");
        return new StoredJob(
                rs.getLong("id"),
                definition(rs),
                rs.getLong("runs"),
                nullableLong(rs, "last_task_id"),
                status == null ? null : TaskStatus.valueOf(status),
                rs.getString("last_error"),
                dialect.getInstant(rs, "created_at"),
                dialect.getInstant(rs, "updated_at"));
    }

    private JobDefinition definition(ResultSet rs) throws SQLException {
        RetryPolicy policy = RetryPolicy.of(
                RetryPolicy.Backoff.valueOf(rs.getString("backoff")),
                Duration.ofMillis(rs.getLong("backoff_initial_ms")),
                rs.getDouble("backoff_multiplier"),
                Duration.ofMillis(rs.getLong("backoff_max_ms")),
                rs.getDouble("backoff_jitter"));
        return new JobDefinition(
                rs.getString("code"),
                rs.getString("name"),
                rs.getString("description"),
                rs.getString("business_type"),
                rs.getString("business_id"),
                new JobTarget(
                        rs.getString("bean_name"),
                        rs.getString("method_name"),
                        readTypes(rs.getString("parameter_types"))),
                rs.getString("arguments"),
                rs.getString("queue"),
                rs.getInt("max_attempts"),
                policy,
                rs.getString("cron"),
                rs.getString("time_zone"),
                rs.getBoolean("enabled"));
    }

    private static Long nullableLong(ResultSet rs, String column) throws SQLException {
        long v = rs.getLong(column);
        return rs.wasNull() ? null : v;
    }

    private String writeTypes(List<String> types) {
        return mapper.writeValueAsString(types);
    }

    private List<String> readTypes(String json) throws SQLException {
        try {
            return json == null ? List.of() : mapper.readValue(json, STRINGS);
        } catch (JacksonException e) {
            throw new SQLException("dbtasks_job.parameter_types is not a JSON array of strings: " + json, e);
        }
    }
}
