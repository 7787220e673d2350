package io.dbtasks.server.audit;

import java.time.Instant;

/**
 * One recorded operator action.
 *
 * @param id the entry's id, increasing in the order entries were stored; 0 before it is stored
 * @param at when the request finished (the server's clock, millisecond precision)
 * @param actor the user name of the caller
 * @param role the caller's highest role: {@code admin}, {@code operator}, {@code viewer}, or
 *     {@code none} for an authenticated caller with no server role
 * @param channel {@code api} for requests under {@code /api}, {@code dashboard} for the rest
 * @param action the method and the endpoint's path pattern, with verb variables filled in, such as
 *     {@code POST /api/tasks/{id}/retry} or {@code POST /dashboard/tasks/{id}/cancel}; the raw path
 *     when no endpoint matches
 * @param target what the action named: path variables such as {@code id=42} or {@code code=nightly},
 *     and the {@code Location} of a created resource; {@code null} when none
 * @param parameters the query string and form parameters, without CSRF tokens and without any
 *     parameter whose name suggests a secret; {@code null} when none. Request bodies are never stored.
 * @param filter the filter of a bulk action, as the controller stated it; {@code null} for other actions
 * @param touched how many tasks (or runs, or chunks) a bulk action changed; {@code null} when not
 *     stated, or while a background bulk action is still running
 * @param outcome success, refused or failed, by {@code status}
 * @param status the HTTP status of the response
 * @param client the caller's address as the server saw it
 */
public record AuditEntry(
        long id,
        Instant at,
        String actor,
        String role,
        String channel,
        String action,
        String target,
        String parameters,
        String filter,
        Long touched,
        AuditOutcome outcome,
        int status,
        String client) {}
