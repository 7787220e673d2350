package io.dbtasks.internal.batch;

import io.dbtasks.EnqueueResult;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.batch.Batch;
import io.dbtasks.batch.BatchNotFoundException;
import io.dbtasks.batch.BatchProgress;
import io.dbtasks.batch.BatchRequest;
import io.dbtasks.batch.Batches;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.LongFunction;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/** Batches in {@code dbtasks_batch} and {@code dbtasks_batch_chunk}; the protocol is on {@link Batches}. */
public final class JdbcBatches implements Batches {
    /** Chunk tasks enqueued per statement group while a batch is created. */
    private static final int ENQUEUE_PAGE = 500;

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final JsonMapper mapper;
    private final BiFunction<Connection, List<TaskRequest>, List<EnqueueResult>> enqueue;
    private final LongFunction<?> retryTask;
    private final io.dbtasks.workflow.Workflows workflows;

    /**
     * @param jdbc the engine's connections
     * @param dialect the database's dialect
     * @param mapper writes the parameters
     * @param enqueue enqueues tasks on a connection, in its transaction
     * @param retryTask sends a FAILED or CANCELLED task back to PENDING
     * @param workflows where a batch with callbacks is inserted as a workflow: its chunks, and each
     *     callback a step that depends on every chunk
     */
    public JdbcBatches(
            Jdbc jdbc,
            Dialect dialect,
            JsonMapper mapper,
            BiFunction<Connection, List<TaskRequest>, List<EnqueueResult>> enqueue,
            LongFunction<?> retryTask,
            io.dbtasks.workflow.Workflows workflows) {
        this.workflows = workflows;
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.mapper = mapper;
        this.enqueue = enqueue;
        this.retryTask = retryTask;
    }

    @Override
    public Batch create(BatchRequest r) {
        Objects.requireNonNull(r, "request");
        String params = writeParams(r);
        if (r.idempotencyKey() != null) {
            Optional<Batch> existing = findByKey(r.idempotencyKey());
            if (existing.isPresent()) {
                return duplicate(existing.get());
            }
        }
        try {
            long id = jdbc.inTransaction("Creating a batch of " + r.chunks() + " chunk(s) of " + r.kind(), c -> {
                long batchId = insertBatch(c, r, params);
                if (r.hasCallbacks()) {
                    insertWithCallbacks(c, batchId, r);
                    return batchId;
                }
                for (int from = 0; from < r.chunks(); from += ENQUEUE_PAGE) {
                    int to = Math.min(r.chunks(), from + ENQUEUE_PAGE);
                    List<TaskRequest> requests = new ArrayList<>(to - from);
                    for (int chunk = from; chunk < to; chunk++) {
                        TaskRequest.Builder b = TaskRequest.builder(KIND_PREFIX + r.kind())
                                .payload(new ChunkPayload(batchId, chunk))
                                .options(r.options())
                                .name(r.name() == null ? r.kind() + " chunk " + chunk : r.name() + " chunk " + chunk)
                                .reference("batch:" + batchId);
                        requests.add(b.build());
                    }
                    List<EnqueueResult> results = enqueue.apply(c, requests);
                    try (PreparedStatement ps = c.prepareStatement(
                            "INSERT INTO dbtasks_batch_chunk (batch_id, chunk, task_id) VALUES (?, ?, ?)")) {
                        for (int i = 0; i < results.size(); i++) {
                            ps.setLong(1, batchId);
                            ps.setInt(2, from + i);
                            ps.setLong(3, results.get(i).task().id());
                            ps.addBatch();
                        }
                        ps.executeBatch();
                    }
                }
                return batchId;
            });
            return find(id).orElseThrow(() -> new BatchNotFoundException(id));
        } catch (io.dbtasks.DbTasksException e) {
            // Two creators of one key: the loser's INSERT hit the unique key; the winner's batch stands.
            if (r.idempotencyKey() != null && e.getCause() instanceof SQLException s && dialect.isUniqueViolation(s)) {
                return duplicate(findByKey(r.idempotencyKey()).orElseThrow(() -> e));
            }
            throw e;
        }
    }

    /**
     * A batch with callbacks is a workflow: a step per chunk, and each callback a step that depends
     * on every chunk (on finish: whatever their outcome; on success: cancelled by a failure; on
     * failure: run only if one failed), so the transaction that settles the last chunk makes each
     * callback claimable, or cancels it, exactly once.
     */
    private void insertWithCallbacks(Connection c, long batchId, BatchRequest r) throws SQLException {
        String label = "batch " + batchId + " (" + (r.name() == null ? r.kind() : r.name()) + ")";
        io.dbtasks.workflow.Workflow.Builder graph = io.dbtasks.workflow.Workflow.named(
                label.length() <= io.dbtasks.workflow.Workflow.MAX_NAME_LENGTH
                        ? label
                        : label.substring(0, io.dbtasks.workflow.Workflow.MAX_NAME_LENGTH));
        String[] chunks = new String[r.chunks()];
        for (int chunk = 0; chunk < r.chunks(); chunk++) {
            chunks[chunk] = "chunk " + chunk;
            graph.step(chunks[chunk], chunkRequest(batchId, chunk, r));
        }
        callback(graph, "on finish", r.onFinish(), chunks, io.dbtasks.workflow.Dependency::runAnyway);
        callback(graph, "on success", r.onSuccess(), chunks, d -> d);
        callback(graph, "on failure", r.onFailure(), chunks, io.dbtasks.workflow.Dependency::runIfAnyFailed);
        io.dbtasks.workflow.WorkflowRun run = workflows.insert(c, graph.build());
        try (PreparedStatement ps =
                c.prepareStatement("INSERT INTO dbtasks_batch_chunk (batch_id, chunk, task_id) VALUES (?, ?, ?)")) {
            for (int chunk = 0; chunk < r.chunks(); chunk++) {
                ps.setLong(1, batchId);
                ps.setInt(2, chunk);
                ps.setLong(3, run.taskId(chunks[chunk]));
                ps.addBatch();
                if (chunk % ENQUEUE_PAGE == ENQUEUE_PAGE - 1) {
                    ps.executeBatch();
                }
            }
            ps.executeBatch();
        }
    }

    private static void callback(
            io.dbtasks.workflow.Workflow.Builder graph,
            String step,
            TaskRequest callback,
            String[] chunks,
            java.util.function.UnaryOperator<io.dbtasks.workflow.Dependency> policy) {
        if (callback == null) {
            return;
        }
        io.dbtasks.workflow.Dependency[] dependencies = new io.dbtasks.workflow.Dependency[chunks.length];
        for (int k = 0; k < chunks.length; k++) {
            dependencies[k] = policy.apply(io.dbtasks.workflow.Dependency.on(chunks[k]));
        }
        graph.step(step, callback, dependencies);
    }

    private static TaskRequest chunkRequest(long batchId, int chunk, BatchRequest r) {
        return TaskRequest.builder(KIND_PREFIX + r.kind())
                .payload(new ChunkPayload(batchId, chunk))
                .options(r.options())
                .name(r.name() == null ? r.kind() + " chunk " + chunk : r.name() + " chunk " + chunk)
                .reference("batch:" + batchId)
                .build();
    }

    private static Batch duplicate(Batch b) {
        return new Batch(b.id(), b.kind(), b.name(), b.idempotencyKey(), b.chunks(), b.params(), b.createdAt(), true);
    }

    private long insertBatch(Connection c, BatchRequest r, String params) throws SQLException {
        String sql = "INSERT INTO dbtasks_batch (kind, name, idempotency_key, chunks, params, created_at)"
                + " VALUES (?, ?, ?, ?, ?, " + dialect.now() + ")";
        try (PreparedStatement ps = c.prepareStatement(sql, new String[] {"id"})) {
            ps.setString(1, r.kind());
            ps.setString(2, r.name());
            ps.setString(3, r.idempotencyKey());
            ps.setInt(4, r.chunks());
            ps.setString(5, params);
            ps.executeUpdate();
            try (ResultSet keys = ps.getGeneratedKeys()) {
                if (!keys.next()) {
                    throw new SQLException("The database returned no id for the inserted batch");
                }
                return keys.getLong(1);
            }
        }
    }

    private String writeParams(BatchRequest r) {
        if (r.params() == null) {
            return null;
        }
        String json;
        try {
            json = mapper.writeValueAsString(r.params());
        } catch (JacksonException e) {
            throw new io.dbtasks.InvalidPayloadException(
                    "Parameters of batch kind '" + r.kind() + "' ("
                            + r.params().getClass().getName() + ") cannot be written as JSON: "
                            + e.getOriginalMessage(),
                    e);
        }
        String problem = io.dbtasks.StoredText.problem(json);
        if (problem != null) {
            // Jackson escapes NUL but copies a lone surrogate, which no database stores faithfully.
            throw new io.dbtasks.InvalidPayloadException("The batch's params written as JSON " + problem, null);
        }
        return json;
    }

    @Override
    public Optional<Batch> find(long id) {
        return select("id = ?", id);
    }

    private Optional<Batch> findByKey(String key) {
        return select("idempotency_key = ?", key);
    }

    private Optional<Batch> select(String where, Object arg) {
        return jdbc.withConnection("Reading a batch", c -> {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT id, kind, name, idempotency_key, chunks, params, created_at FROM dbtasks_batch WHERE "
                            + where)) {
                ps.setObject(1, arg);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        return Optional.<Batch>empty();
                    }
                    return Optional.of(new Batch(
                            rs.getLong("id"),
                            rs.getString("kind"),
                            rs.getString("name"),
                            rs.getString("idempotency_key"),
                            rs.getInt("chunks"),
                            rs.getString("params"),
                            dialect.getInstant(rs, "created_at"),
                            false));
                }
            }
        });
    }

    @Override
    public BatchProgress progress(long id) {
        String notDone = "c.done_at IS NULL AND ";
        String sql = "SELECT COUNT(*),"
                + " SUM(CASE WHEN c.done_at IS NOT NULL THEN 1 ELSE 0 END),"
                + " SUM(CASE WHEN " + notDone + "(t.id IS NULL OR t.status IN (" + Dialect.status(TaskStatus.FAILED)
                + ", " + Dialect.status(TaskStatus.CANCELLED) + ", " + Dialect.status(TaskStatus.SUCCEEDED)
                + ")) THEN 1 ELSE 0 END),"
                + " SUM(CASE WHEN " + notDone + "t.status = " + Dialect.status(TaskStatus.RUNNING)
                + " THEN 1 ELSE 0 END),"
                + " SUM(CASE WHEN " + notDone + "t.status = " + Dialect.status(TaskStatus.RUNNING)
                + " AND t.lease_expires_at < " + dialect.now() + " THEN 1 ELSE 0 END)"
                + " FROM dbtasks_batch_chunk c LEFT JOIN dbtasks_task t ON t.id = c.task_id WHERE c.batch_id = ?";
        BatchProgress p = jdbc.withConnection("Counting the chunks of batch " + id, c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setLong(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    int chunks = rs.getInt(1);
                    if (chunks == 0) {
                        return null;
                    }
                    int done = rs.getInt(2);
                    int failed = rs.getInt(3);
                    int running = rs.getInt(4);
                    return new BatchProgress(
                            id, chunks, done, failed, running, chunks - done - failed - running, rs.getInt(5));
                }
            }
        });
        if (p == null) {
            throw new BatchNotFoundException(id);
        }
        return p;
    }

    @Override
    public int retryFailed(long id) {
        progress(id); // throws if there is no such batch
        List<Long> failed = jdbc.withConnection("Finding the failed chunks of batch " + id, c -> {
            try (PreparedStatement ps = c.prepareStatement("SELECT t.id FROM dbtasks_batch_chunk c JOIN dbtasks_task t"
                    + " ON t.id = c.task_id WHERE c.batch_id = ? AND c.done_at IS NULL AND t.status IN ("
                    + Dialect.status(TaskStatus.FAILED) + ", " + Dialect.status(TaskStatus.CANCELLED) + ")")) {
                ps.setLong(1, id);
                List<Long> ids = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        ids.add(rs.getLong(1));
                    }
                }
                return ids;
            }
        });
        int sent = 0;
        for (long taskId : failed) {
            try {
                retryTask.apply(taskId);
                sent++;
            } catch (io.dbtasks.IllegalTransitionException raced) {
                // retried by someone else meanwhile
            }
        }
        return sent;
    }
}
