/**
 * The JDBC workflow store: inserting a workflow's row, steps and dependency edges in one
 * transaction, the steps a running step adds, reading, cancelling and retrying workflows.
 */
package io.dbtasks.internal.workflow;
