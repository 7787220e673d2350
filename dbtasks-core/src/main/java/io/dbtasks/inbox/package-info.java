/**
 * The processed-message inbox: each message takes effect once per consumer, however often it is
 * delivered ({@link io.dbtasks.inbox.Inbox}, from {@code DbTasks.inbox()}).
 */
@NullMarked
package io.dbtasks.inbox;

import org.jspecify.annotations.NullMarked;
