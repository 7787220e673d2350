package io.dbtasks.server.api;

import java.time.Instant;

/**
 * The body of {@code POST /api/tasks/{id}/reschedule}.
 *
 * @param runAt the new due time, an ISO-8601 instant between 1970 and 9999; required
 */
public record RescheduleRequest(Instant runAt) {}
