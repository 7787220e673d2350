package io.dbtasks.internal.batch;

import io.dbtasks.NonRetryableException;
import io.dbtasks.TaskContext;
import io.dbtasks.TransactionalTaskHandler;
import io.dbtasks.batch.ChunkContext;
import io.dbtasks.batch.ChunkHandler;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.dialect.Dialects;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Runs one chunk inside the engine's task transaction: first the guarded UPDATE that records the
 * chunk as done (it takes the chunk row's lock, so a second worker holding the same chunk after a
 * takeover waits, then finds it done or not by how the first transaction ended), then the
 * application's {@link ChunkHandler}. The engine commits both with the task's guarded completion.
 */
public final class ChunkTaskHandler<P> implements TransactionalTaskHandler<ChunkPayload> {
    private final String kind;
    private final Class<P> paramsType;
    private final ChunkHandler<P> handler;
    private final JsonMapper mapper;
    private volatile Dialect dialect;

    /**
     * @param kind the batch kind
     * @param paramsType the class the batch parameters are read as
     * @param handler the application's handler
     * @param mapper reads the parameters
     */
    public ChunkTaskHandler(String kind, Class<P> paramsType, ChunkHandler<P> handler, JsonMapper mapper) {
        this.kind = kind;
        this.paramsType = paramsType;
        this.handler = handler;
        this.mapper = mapper;
    }

    @Override
    public void handle(TaskContext context, Connection tx, ChunkPayload chunk) throws Exception {
        Dialect d = dialect(tx);
        try (PreparedStatement ps = tx.prepareStatement("UPDATE dbtasks_batch_chunk SET done_at = " + d.now()
                + ", done_token = ? WHERE batch_id = ? AND chunk = ? AND done_at IS NULL")) {
            ps.setLong(1, context.fencingToken());
            ps.setLong(2, chunk.batchId());
            ps.setInt(3, chunk.chunk());
            if (ps.executeUpdate() == 0) {
                requireChunkRow(tx, chunk);
                return; // done by an earlier task of this chunk, whose effects committed with the record
            }
        }
        String paramsJson;
        int chunks;
        try (PreparedStatement ps = tx.prepareStatement("SELECT chunks, params FROM dbtasks_batch WHERE id = ?")) {
            ps.setLong(1, chunk.batchId());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new NonRetryableException("Batch " + chunk.batchId() + " no longer exists; chunk "
                            + chunk.chunk() + " has nothing to run for");
                }
                chunks = rs.getInt(1);
                paramsJson = rs.getString(2);
            }
        }
        handler.handle(new ChunkContext(chunk.batchId(), kind, chunk.chunk(), chunks, context), tx, params(paramsJson));
    }

    private P params(String json) {
        if (paramsType == Void.class || json == null) {
            return null;
        }
        try {
            return mapper.readValue(json, paramsType);
        } catch (JacksonException e) {
            throw new NonRetryableException(
                    "Parameters of batch kind '" + kind + "' cannot be read as " + paramsType.getName() + ": "
                            + e.getOriginalMessage() + "; create the batch again with parameters of that type",
                    e);
        }
    }

    private static void requireChunkRow(Connection tx, ChunkPayload chunk) throws SQLException {
        try (PreparedStatement ps =
                tx.prepareStatement("SELECT 1 FROM dbtasks_batch_chunk WHERE batch_id = ? AND chunk = ?")) {
            ps.setLong(1, chunk.batchId());
            ps.setInt(2, chunk.chunk());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new NonRetryableException("Chunk " + chunk.chunk() + " of batch " + chunk.batchId()
                            + " has no chunk record (the batch was deleted); nothing to do");
                }
            }
        }
    }

    private Dialect dialect(Connection c) throws SQLException {
        Dialect d = dialect;
        if (d == null) {
            DatabaseMetaData md = c.getMetaData();
            d = Dialects.forProduct(md.getDatabaseProductName(), md.getDatabaseProductVersion());
            dialect = d;
        }
        return d;
    }
}
