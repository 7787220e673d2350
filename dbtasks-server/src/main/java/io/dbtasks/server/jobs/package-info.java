/**
 * The REST API of job definitions ({@code /api/jobs}, {@code /api/job-runs}, {@code
 * /api/job-targets}) and chunked batches ({@code /api/batches}).
 */
package io.dbtasks.server.jobs;
