/**
 * The JDBC workflow store: inserting a workflow's row, steps and dependency edges in one
 * transaction, the steps a running step adds, reading, cancelling and retrying workflows. Depends on
 * {@code enqueue}, {@code query}, {@code completion} and {@code support}. Not an API: anything here
 * may change in any release. Use {@link io.dbtasks.DbTasks#workflows()}.
 */
package io.dbtasks.internal.workflow;
