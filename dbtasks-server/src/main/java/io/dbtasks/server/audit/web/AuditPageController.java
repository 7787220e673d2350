package io.dbtasks.server.audit.web;

import io.dbtasks.server.audit.AuditLog;
import io.dbtasks.server.audit.AuditPage;
import io.dbtasks.server.dashboard.DashboardController;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.RequestParam;

/**
 * The dashboard's audit log page, {@code /dashboard/audit}: entries newest first, 50 a page, for
 * admins only (the navigation shows the link to admins only; others get 403).
 */
@Controller
public class AuditPageController {
    static final int PAGE_SIZE = 50;

    private final AuditLog auditLog;
    private final DashboardController dashboard;

    /**
     * @param auditLog the entries
     * @param dashboard the dashboard, whose caller model every page shares
     */
    public AuditPageController(AuditLog auditLog, DashboardController dashboard) {
        this.auditLog = auditLog;
        this.dashboard = dashboard;
    }

    /** @param model gets what every dashboard page knows about the caller */
    @ModelAttribute
    public void caller(Model model) {
        dashboard.caller(model);
    }

    /**
     * @param p the zero-based page
     * @param model the page's model
     * @return the audit page
     */
    @GetMapping("/dashboard/audit")
    public String audit(@RequestParam(defaultValue = "0") int p, Model model) {
        int pageNo = Math.max(0, p);
        AuditPage page = auditLog.page(pageNo, PAGE_SIZE);
        model.addAttribute("page", "audit");
        model.addAttribute("entries", page.items());
        model.addAttribute("p", pageNo);
        model.addAttribute("hasNext", (long) (pageNo + 1) * PAGE_SIZE < page.total());
        model.addAttribute("total", page.total());
        model.addAttribute("retention", auditLog.properties().getRetention());
        return "dashboard/audit";
    }
}
