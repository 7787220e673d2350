/**
 * The engine's parts: claiming, leasing, completing, rescuing, querying. Not an API: anything here
 * may change in any release. Use {@link io.dbtasks.DbTasks}.
 */
package io.dbtasks.internal;
