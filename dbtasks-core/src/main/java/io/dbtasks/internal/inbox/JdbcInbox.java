package io.dbtasks.internal.inbox;

import io.dbtasks.inbox.Inbox;
import io.dbtasks.inbox.InboxHandler;
import io.dbtasks.inbox.InboxResult;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.maintenance.Retention;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.lock.spi.WorkFailures;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The inbox in {@code dbtasks_inbox}; the protocol is described on {@link Inbox}. The record is
 * inserted first, so a concurrent duplicate waits on the primary key while the handler runs, and
 * is decided by how the first transaction ends.
 */
public final class JdbcInbox implements Inbox {
    private static final int MAX_CONSUMER = 200;
    private static final int MAX_MESSAGE_ID = 255;
    private static final int MAX_TRIES = 3;

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final String insertSql;

    /**
     * @param jdbc the engine's connections
     * @param dialect the database's dialect
     */
    public JdbcInbox(Jdbc jdbc, Dialect dialect) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.insertSql = "INSERT INTO dbtasks_inbox (consumer, message_id, received_at) VALUES (?, ?, " + dialect.now()
                + ")" + dialect.onConflictDoNothing();
    }

    @Override
    public InboxResult receive(String consumer, String messageId, InboxHandler handler) {
        validate(consumer, messageId, handler);
        return jdbc.inTransaction(what(consumer, messageId), c -> {
            for (int attempt = 1; ; attempt++) {
                try {
                    return handle(c, consumer, messageId, handler);
                } catch (SQLException e) {
                    // Only our INSERT throws SQLException here, before the handler ran; the database
                    // rolled back (MariaDB) or aborted (PostgreSQL) the transaction, so start it again.
                    if (attempt >= MAX_TRIES || !dialect.isTransient(e)) {
                        throw e;
                    }
                    c.rollback();
                    Jdbc.pauseBeforeRetry(attempt);
                }
            }
        });
    }

    @Override
    public InboxResult receive(Connection connection, String consumer, String messageId, InboxHandler handler) {
        Objects.requireNonNull(connection, "connection");
        validate(consumer, messageId, handler);
        try {
            if (connection.getAutoCommit()) {
                throw new IllegalArgumentException("The connection is in auto-commit mode, so the inbox record of "
                        + consumer + "/" + messageId + " would commit without the handler's writes; call"
                        + " setAutoCommit(false) first and commit after receive");
            }
            return handle(connection, consumer, messageId, handler);
        } catch (SQLException e) {
            throw Jdbc.failure(what(consumer, messageId), e);
        }
    }

    @Override
    public int deleteOlderThan(Duration age) {
        Objects.requireNonNull(age, "age");
        return Retention.deleteInBatches(
                jdbc,
                dialect,
                "dbtasks_inbox",
                List.of("consumer", "message_id"),
                "received_at < " + dialect.nowPlusMillis(),
                age);
    }

    /** Records the message and runs the handler; SQLException comes only from the record. */
    private InboxResult handle(Connection c, String consumer, String messageId, InboxHandler handler)
            throws SQLException {
        if (!insert(c, consumer, messageId)) {
            return InboxResult.DUPLICATE;
        }
        try {
            handler.handle(c);
        } catch (Exception e) {
            throw WorkFailures.rethrow("Inbox handler of " + consumer + "/" + messageId, e);
        }
        return InboxResult.RECEIVED;
    }

    private boolean insert(Connection c, String consumer, String messageId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(insertSql)) {
            ps.setString(1, consumer);
            ps.setString(2, messageId);
            return dialect.insertIfAbsent(ps);
        }
    }

    private static void validate(String consumer, String messageId, InboxHandler handler) {
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(handler, "handler");
        io.dbtasks.StoredText.requireName("consumer", consumer);
        io.dbtasks.StoredText.requireText("messageId", messageId);
        if (consumer.isEmpty() || consumer.length() > MAX_CONSUMER) {
            throw new IllegalArgumentException(
                    "consumer must be 1 to " + MAX_CONSUMER + " characters: '" + consumer + "'");
        }
        if (messageId.isEmpty() || messageId.length() > MAX_MESSAGE_ID) {
            throw new IllegalArgumentException(
                    "messageId must be 1 to " + MAX_MESSAGE_ID + " characters: '" + messageId + "'");
        }
    }

    private static String what(String consumer, String messageId) {
        return "Inbox receive of " + consumer + "/" + messageId;
    }
}
