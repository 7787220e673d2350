package io.dbtasks.server.audit.web;

import io.dbtasks.server.api.BadRequestException;
import io.dbtasks.server.audit.AuditLog;
import io.dbtasks.server.audit.AuditPage;
import io.swagger.v3.oas.annotations.Operation;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The audit log through the API: {@code GET /api/audit}, newest first, for admins only. */
@RestController
public class AuditController {
    /** The page size when none is asked for. */
    static final int DEFAULT_SIZE = 50;

    private final AuditLog auditLog;

    /** @param auditLog the entries */
    public AuditController(AuditLog auditLog) {
        this.auditLog = auditLog;
    }

    /**
     * Lists audit entries, newest first.
     *
     * @param page the zero-based page, default 0
     * @param size entries per page, 1 to {@value AuditLog#MAX_PAGE_SIZE}, default {@value #DEFAULT_SIZE}
     * @return the page and the number of entries kept
     * @throws BadRequestException (400) if page or size is out of range
     */
    @Operation(
            summary = "List the audit log of operator actions, newest first (admin only)",
            description = "One entry per state-changing request of an authenticated caller: who, when, the action,"
                    + " its targets, a bulk action's filter and touched count, and the outcome with the HTTP status.")
    @GetMapping("/api/audit")
    public AuditPage list(
            @RequestParam(defaultValue = "0") int page, @RequestParam(defaultValue = "" + DEFAULT_SIZE) int size) {
        try {
            return auditLog.page(page, size);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
    }
}
