package io.dbtasks.inbox;

import java.sql.Connection;

/**
 * Handles one message inside the inbox transaction ({@link Inbox}).
 */
@FunctionalInterface
public interface InboxHandler {
    /**
     * @param transaction the connection whose transaction also records the message; do the
     *     message's database writes on it so they commit or roll back with the record. Do not commit,
     *     roll back or close it
     * @throws Exception anything; the transaction is rolled back and the exception rethrown
     */
    void handle(Connection transaction) throws Exception;
}
