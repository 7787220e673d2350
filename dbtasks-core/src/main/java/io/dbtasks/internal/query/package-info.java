/**
 * The task store's read side and operator actions: queries, searches, row mapping, cancel, retry and
 * run-now, and queue pauses with the worker row. Depends on {@code completion} and {@code support}.
 * Not an API: anything here may change in any release. Use {@link io.dbtasks.DbTasks}.
 */
package io.dbtasks.internal.query;
