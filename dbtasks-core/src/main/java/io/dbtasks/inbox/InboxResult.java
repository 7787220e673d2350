package io.dbtasks.inbox;

/** What {@link Inbox#receive} did with a delivery. */
public enum InboxResult {
    /** The message was new: the handler ran and its writes committed (or will, with the caller's). */
    RECEIVED,
    /** The message had been received before by this consumer; the handler did not run. */
    DUPLICATE
}
