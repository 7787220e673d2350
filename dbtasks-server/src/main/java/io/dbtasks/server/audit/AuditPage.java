package io.dbtasks.server.audit;

import java.util.List;

/**
 * One page of the audit log.
 *
 * @param items the entries, newest first
 * @param page the zero-based page number
 * @param size the requested page size
 * @param total entries in the log across all pages
 */
public record AuditPage(List<AuditEntry> items, int page, int size, long total) {}
