package io.dbtasks.inbox;

import io.dbtasks.DbTasksException;
import io.dbtasks.WorkFailedException;
import java.sql.Connection;
import java.time.Duration;

/**
 * A processed-message inbox: each message takes effect once per consumer however often it is
 * delivered.
 *
 * <p>Receiving inserts {@code (consumer, message id)} into {@code dbtasks_inbox}, whose primary key
 * is the guarantee, and runs the handler on the same connection in the same transaction. A
 * duplicate inserts nothing and skips the handler. If the handler throws, the transaction rolls
 * back, record included, so a redelivery runs it again. A duplicate delivered while the first is
 * still in its transaction waits on the key until that transaction ends: it is then a DUPLICATE (the
 * first committed) or runs (the first rolled back). Handlers of one message therefore never run
 * concurrently, but a slow handler holds up that message's duplicates.
 *
 * <p>Thread-safe.
 */
public interface Inbox {
    /**
     * Receives a message in a transaction of its own, committed when the handler returns. A deadlock
     * or serialization failure on recording the message (MariaDB can report one when several
     * duplicates wait on a rolled-back first delivery) is retried up to 3 times before the handler
     * runs.
     *
     * @param consumer who processes the message, 1 to 200 characters; the same message id is new to
     *     each consumer
     * @param messageId the message's id, 1 to 255 characters
     * @param handler the handler; its writes go through the connection it is given
     * @return RECEIVED if the handler ran and committed, DUPLICATE if the message was received before
     * @throws WorkFailedException if the handler threw a checked exception (unchecked ones and errors
     *     are rethrown as they are); in every case the transaction was rolled back
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code consumer} or {@code messageId} is empty, too long or
     *     holds what {@link io.dbtasks.StoredText} refuses (a control character in the consumer)
     * @throws DbTasksException if the database fails; nothing was recorded
     */
    InboxResult receive(String consumer, String messageId, InboxHandler handler);

    /**
     * Receives a message in the caller's transaction: the record and the handler's writes commit or
     * roll back with it. Neither commits, rolls back nor closes the connection. If this throws, roll
     * the transaction back.
     *
     * @param connection an open connection with auto-commit off, to the engine's database
     * @param consumer who processes the message, 1 to 200 characters
     * @param messageId the message's id, 1 to 255 characters
     * @param handler the handler; it is given {@code connection}
     * @return RECEIVED if the handler ran, DUPLICATE if the message was received before
     * @throws IllegalArgumentException if the connection is in auto-commit mode (the record would
     *     commit on its own), or an id is empty or too long
     * @throws WorkFailedException if the handler threw a checked exception
     * @throws NullPointerException if an argument is null
     * @throws DbTasksException if the database fails
     */
    InboxResult receive(Connection connection, String consumer, String messageId, InboxHandler handler);

    /**
     * Deletes inbox records received more than {@code age} ago by the database clock, in batches of
     * 1,000 rows per statement. A message delivered again after its record is deleted is handled
     * again: keep records longer than the longest redelivery window.
     *
     * @param age how old a record must be; positive
     * @return how many records were deleted
     * @throws IllegalArgumentException if {@code age} is not positive
     * @throws DbTasksException if the database fails; the batches deleted before it stay deleted
     */
    int deleteOlderThan(Duration age);
}
