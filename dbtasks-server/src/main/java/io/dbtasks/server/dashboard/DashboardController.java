package io.dbtasks.server.dashboard;

import io.dbtasks.Attempt;
import io.dbtasks.DbTasks;
import io.dbtasks.IllegalTransitionException;
import io.dbtasks.Task;
import io.dbtasks.TaskNotFoundException;
import io.dbtasks.TaskStatus;
import io.dbtasks.WorkerInfo;
import io.dbtasks.batch.BatchNotFoundException;
import io.dbtasks.batch.BatchProgress;
import io.dbtasks.batch.Batches;
import io.dbtasks.job.JobDefinitions;
import io.dbtasks.job.JobDisabledException;
import io.dbtasks.job.JobNotFoundException;
import io.dbtasks.job.JobPage;
import io.dbtasks.job.JobRun;
import io.dbtasks.schedule.ScheduleInfo;
import io.dbtasks.schedule.ScheduleNotFoundException;
import io.dbtasks.schedule.Schedules;
import io.dbtasks.server.audit.AuditDetails;
import io.dbtasks.server.security.PayloadVisibility;
import io.dbtasks.server.security.Roles;
import jakarta.validation.Valid;
import java.security.Principal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.servlet.mvc.support.RedirectAttributes;

/**
 * The dashboard: server-rendered pages at {@code /} and under {@code /dashboard}, live-refreshed by
 * htmx (see {@code static/dashboard/dashboard.js}). Reads come from {@link DashboardStore} and
 * {@link OverviewSnapshots}; every change goes through {@link DbTasks} ({@link BulkActions}).
 * Actions are plain form POSTs answered by a redirect, so they work without JavaScript.
 */
@Controller
public class DashboardController {
    static final int PAGE_SIZE = 50;
    static final int BATCH_ROWS = 100;

    private final DbTasks dbTasks;
    private final DashboardStore store;
    private final OverviewSnapshots snapshots;
    private final BulkActions actions;
    private final Duration lease;
    private final PayloadVisibility payloads;

    /**
     * @param dbTasks the engine
     * @param store the dashboard's queries
     * @param snapshots the overview numbers
     * @param actions single and bulk actions
     * @param lease the engines' lease: a worker whose heartbeat is older is shown as not alive
     * @param payloads whether the caller may see payloads and stack traces
     */
    public DashboardController(
            DbTasks dbTasks,
            DashboardStore store,
            OverviewSnapshots snapshots,
            BulkActions actions,
            @Value("${dbtasks.lease:30s}") Duration lease,
            PayloadVisibility payloads) {
        this.payloads = payloads;
        this.dbTasks = dbTasks;
        this.store = store;
        this.snapshots = snapshots;
        this.actions = actions;
        this.lease = lease;
    }

    // --- who is looking ---------------------------------------------------------------------------

    /**
     * What every page needs to know about the caller: the buttons of actions the role cannot do are
     * disabled or left out. The server refuses those actions regardless, by the rules of {@code
     * RoleRules} (the one place that says which role an action needs); the check below is of what
     * a role may see (a payload search where payloads are hidden from viewers).
     */
    @ModelAttribute
    public void caller(Model model) {
        Authentication auth = SecurityContextHolder.getContext().getAuthentication();
        boolean signedIn = auth != null && auth.isAuthenticated() && Roles.has(auth, Roles.ROLE_VIEWER);
        model.addAttribute("user", signedIn ? auth.getName() : null);
        model.addAttribute(
                "role",
                Roles.has(auth, Roles.ROLE_ADMIN)
                        ? Roles.ADMIN
                        : Roles.has(auth, Roles.ROLE_OPERATOR) ? Roles.OPERATOR : Roles.VIEWER);
        model.addAttribute("canOperate", Roles.has(auth, Roles.ROLE_OPERATOR));
        model.addAttribute("canAdmin", Roles.has(auth, Roles.ROLE_ADMIN));
        model.addAttribute("showPayloads", payloads.showPayloads(auth));
    }

    private void requirePayloadAccess(TaskSearch search) {
        if (search.payloadPath() != null && !payloads.showPayloads()) {
            throw new AccessDeniedException(
                    "Searching payloads needs the operator role here (payloads are hidden from viewers)");
        }
    }

    // --- overview and queues -----------------------------------------------------------------------

    @GetMapping("/")
    public String overview(Model model) {
        OverviewSnapshots.Snapshot s = snapshots.snapshot();
        model.addAttribute("page", "overview");
        model.addAttribute("snapshot", s);
        model.addAttribute("totals", s.totals());
        model.addAttribute("states", TaskStatus.values());
        model.addAttribute("queues", queueRows(s));
        model.addAttribute("now", Instant.now());
        return "dashboard/overview";
    }

    /** @return throughput and failures per minute over the last hour, for the chart */
    @GetMapping(path = "/dashboard/series", produces = "application/json")
    @ResponseBody
    public OverviewSnapshots.Series series() {
        return snapshots.series();
    }

    @GetMapping("/dashboard/queues")
    public String queues(Model model) {
        OverviewSnapshots.Snapshot s = snapshots.snapshot();
        model.addAttribute("page", "queues");
        model.addAttribute("snapshot", s);
        model.addAttribute("queues", queueRows(s));
        model.addAttribute("foreign", dbTasks.foreignTasks());
        model.addAttribute("now", Instant.now());
        return "dashboard/queues";
    }

    /** One queue on the overview and queue pages. */
    public record QueueRow(
            String name,
            long pending,
            long running,
            long succeeded,
            long failed,
            long cancelled,
            Duration lag,
            boolean paused,
            Map<String, Integer> concurrencyByWorker,
            boolean served) {}

    private List<QueueRow> queueRows(OverviewSnapshots.Snapshot s) {
        OverviewSnapshots.Cluster cluster = snapshots.cluster();
        Set<String> paused = cluster.paused();
        List<WorkerInfo> alive = cluster.workers().stream()
                .filter(w -> Duration.between(w.heartbeatAt(), cluster.readAt()).compareTo(lease) < 0)
                .toList();
        Set<String> names = new TreeSet<>(s.byQueue().keySet());
        names.addAll(paused);
        alive.forEach(w -> names.addAll(w.queues().keySet()));
        List<QueueRow> rows = new ArrayList<>();
        for (String q : names) {
            Map<String, Integer> byWorker = new LinkedHashMap<>();
            for (WorkerInfo w : alive) {
                Integer n = w.queues().get(q);
                if (n != null) {
                    byWorker.put(w.workerId(), n);
                }
            }
            rows.add(new QueueRow(
                    q,
                    s.count(q, TaskStatus.PENDING),
                    s.count(q, TaskStatus.RUNNING),
                    s.count(q, TaskStatus.SUCCEEDED),
                    s.count(q, TaskStatus.FAILED),
                    s.count(q, TaskStatus.CANCELLED),
                    s.lag(q),
                    paused.contains(q),
                    byWorker,
                    !byWorker.isEmpty()));
        }
        return rows;
    }

    @PostMapping("/dashboard/queues/pause")
    public String pause(@RequestParam String queue, Principal user, RedirectAttributes flash) {
        boolean changed = dbTasks.pauseQueue(requireName(queue), user == null ? null : user.getName());
        snapshots.refreshCluster();
        flash.addFlashAttribute(
                "message", changed ? "Paused queue " + queue : "Queue " + queue + " was already paused");
        return "redirect:/dashboard/queues";
    }

    @PostMapping("/dashboard/queues/resume")
    public String resume(@RequestParam String queue, RedirectAttributes flash) {
        boolean changed = dbTasks.resumeQueue(requireName(queue));
        snapshots.refreshCluster();
        flash.addFlashAttribute("message", changed ? "Resumed queue " + queue : "Queue " + queue + " was not paused");
        return "redirect:/dashboard/queues";
    }

    private static String requireName(String queue) {
        if (queue == null || queue.isBlank() || queue.length() > 200) {
            throw new IllegalArgumentException("queue must be a queue name of 1 to 200 characters");
        }
        return queue;
    }

    // --- instances -----------------------------------------------------------------------------------

    @GetMapping("/dashboard/instances")
    public String instances(Model model) {
        Instant now = store.databaseNow();
        List<Map<String, Object>> rows = new ArrayList<>();
        for (WorkerInfo w : dbTasks.workers()) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("worker", w);
            r.put("alive", Duration.between(w.heartbeatAt(), now).compareTo(lease) < 0);
            r.put("heartbeatAge", Duration.between(w.heartbeatAt(), now));
            r.put("self", w.workerId().equals(dbTasks.workerId()));
            rows.add(r);
        }
        model.addAttribute("page", "instances");
        model.addAttribute("instances", rows);
        model.addAttribute("lease", lease);
        model.addAttribute("now", now);
        return "dashboard/instances";
    }

    // --- tasks ---------------------------------------------------------------------------------------

    @GetMapping("/dashboard/tasks")
    public String tasks(
            @Valid @ModelAttribute TaskSearchForm form, @RequestParam(required = false) String before, Model model) {
        TaskSearch search = form.toSearch();
        requirePayloadAccess(search);
        Long cursor = null;
        if (before != null && !before.isBlank()) {
            if (!before.matches("[0-9]{1,18}")) {
                throw new IllegalArgumentException("before must be a task id: digits only");
            }
            cursor = Long.parseLong(before);
        }
        long start = System.nanoTime();
        DashboardStore.TaskPage page = store.list(search, cursor, PAGE_SIZE);
        model.addAttribute(
                "queryMillis", Duration.ofNanos(System.nanoTime() - start).toMillis());
        model.addAttribute("page", "tasks");
        model.addAttribute("search", search);
        model.addAttribute("result", page);
        model.addAttribute("cursor", cursor);
        model.addAttribute("states", TaskStatus.values());
        model.addAttribute("queueNames", snapshots.queues());
        model.addAttribute("kinds", new TreeSet<>(dbTasks.kinds()));
        model.addAttribute("actions", BulkActions.Action.values());
        model.addAttribute("now", Instant.now());
        return "dashboard/tasks";
    }

    @GetMapping("/dashboard/tasks/{id}")
    public String task(@PathVariable String id, Model model) {
        long taskId = parseId(id);
        Task task = dbTasks.find(taskId).orElseThrow(() -> new TaskNotFoundException("No task has id " + taskId));
        List<Attempt> attempts = dbTasks.attempts(taskId);
        model.addAttribute("page", "tasks");
        model.addAttribute("task", task);
        model.addAttribute("payload", payloads.showPayloads() ? prettyPayload(task.payload()) : null);
        model.addAttribute("attempts", attempts);
        model.addAttribute("timeline", timeline(task, attempts));
        // Why a PENDING task with a key waits: its key's running limit, FIFO order or rate.
        model.addAttribute(
                "waitReason",
                task.status() == io.dbtasks.TaskStatus.PENDING && task.concurrencyKey() != null
                        ? dbTasks.limits().waitReason(taskId).orElse(null)
                        : null);
        model.addAttribute("now", Instant.now());
        return "dashboard/task";
    }

    /** One line of a task's timeline. */
    public record Event(Instant at, String what, String detail) {}

    private static List<Event> timeline(Task t, List<Attempt> attempts) {
        List<Event> events = new ArrayList<>();
        events.add(new Event(t.createdAt(), "enqueued", "queue " + t.queue() + ", due " + t.runAt()));
        for (Attempt a : attempts) {
            events.add(new Event(
                    a.startedAt(),
                    "attempt " + a.attempt() + " started",
                    "by " + a.worker() + ", fencing token " + a.fencingToken()));
            events.add(new Event(
                    a.finishedAt(),
                    "attempt " + a.attempt() + " " + a.outcome(),
                    a.errorMessage() == null ? "" : DashboardStore.abbreviate(a.errorMessage(), 200)));
        }
        if (t.status() == TaskStatus.RUNNING && t.startedAt() != null) {
            events.add(new Event(
                    t.startedAt(),
                    "attempt " + t.attempt() + " running",
                    "by " + t.leaseOwner() + ", fencing token " + t.fencingToken()));
        }
        if (t.status() == TaskStatus.PENDING && t.attempt() > 0) {
            events.add(new Event(t.runAt(), "next attempt due", ""));
        }
        if ((t.status() == TaskStatus.CANCELLED || t.status() == TaskStatus.FAILED)
                && t.finishedAt() != null
                && attempts.stream().noneMatch(a -> a.finishedAt().equals(t.finishedAt()))) {
            events.add(new Event(t.finishedAt(), t.status().name().toLowerCase(java.util.Locale.ROOT), ""));
        }
        events.removeIf(e -> e.at() == null);
        events.sort(Comparator.comparing(Event::at));
        return events;
    }

    private String prettyPayload(String json) {
        if (json == null) {
            return null;
        }
        try {
            return tools.jackson.databind.json.JsonMapper.builder()
                    .build()
                    .writerWithDefaultPrettyPrinter()
                    .writeValueAsString(tools.jackson.databind.json.JsonMapper.builder()
                            .build()
                            .readTree(json));
        } catch (RuntimeException e) {
            return json;
        }
    }

    @PostMapping("/dashboard/tasks/{id}/{action:retry|cancel|run-now|delete}")
    public String act(@PathVariable String id, @PathVariable String action, RedirectAttributes flash) {
        long taskId = parseId(id);
        BulkActions.Action a = BulkActions.Action.of(action);
        actions.apply(a, taskId);
        flash.addFlashAttribute(
                "message",
                switch (a) {
                    case RETRY -> "Task " + taskId + " sent back to PENDING";
                    case CANCEL -> "Task " + taskId + " cancelled (a RUNNING one stops at its next heartbeat)";
                    case RUN_NOW -> "Task " + taskId + " is due now";
                    case DELETE -> "Task " + taskId + " deleted";
                });
        return a == BulkActions.Action.DELETE ? "redirect:/dashboard/tasks" : "redirect:/dashboard/tasks/" + taskId;
    }

    @PostMapping("/dashboard/tasks/{id}/reschedule")
    public String reschedule(@PathVariable String id, @RequestParam String runAt, RedirectAttributes flash) {
        long taskId = parseId(id);
        Instant at = TaskSearch.of(null, null, null, null, null, runAt, null, null, null, null)
                .createdFrom();
        if (at == null) {
            throw new IllegalArgumentException("runAt is required: a time like 2026-01-02T03:04 (UTC)");
        }
        dbTasks.reschedule(taskId, at);
        snapshots.refreshSoon();
        flash.addFlashAttribute("message", "Task " + taskId + " rescheduled to " + at);
        return "redirect:/dashboard/tasks/" + taskId;
    }

    // --- bulk ----------------------------------------------------------------------------------------

    @PostMapping("/dashboard/bulk/preview")
    public String bulkPreview(@RequestParam String action, @Valid @ModelAttribute TaskSearchForm form, Model model) {
        TaskSearch search = form.toSearch();
        requirePayloadAccess(search);
        model.addAttribute("page", "tasks");
        model.addAttribute("action", BulkActions.Action.of(action));
        model.addAttribute("search", search);
        model.addAttribute("matching", store.count(search));
        return "dashboard/bulk-confirm";
    }

    @PostMapping("/dashboard/bulk")
    public String bulk(@RequestParam String action, @Valid @ModelAttribute TaskSearchForm form, Principal user) {
        TaskSearch search = form.toSearch();
        requirePayloadAccess(search);
        BulkActions.Job job =
                actions.start(BulkActions.Action.of(action), search, user == null ? "anonymous" : user.getName());
        AuditDetails.filter(search.query());
        AuditDetails.touchedWhenDone(job.whenFinished().thenApply(BulkActions.Job::done));
        return "redirect:/dashboard/bulk/" + job.id();
    }

    @GetMapping("/dashboard/bulk/{id}")
    public String bulkJob(@PathVariable String id, Model model) {
        long jobId = parseId(id);
        model.addAttribute("page", "tasks");
        model.addAttribute(
                "job",
                actions.job(jobId)
                        .orElseThrow(() -> new TaskNotFoundException(
                                "No bulk action " + jobId + " is remembered (the last " + BulkActions.KEEP + " are)")));
        return "dashboard/bulk";
    }

    // --- locks, guards, inbox, placeholders -----------------------------------------------------------

    @GetMapping("/dashboard/locks")
    public String locks(Model model) {
        return table(
                model,
                "locks",
                "Lease locks",
                store.locks(500),
                "One row per lock name, kept after release so it holds the name's last fencing token.");
    }

    @GetMapping("/dashboard/guards")
    public String guards(Model model) {
        return table(
                model, "guards", "Run-once guards", store.guards(500), "One row per guard key, newest change first.");
    }

    @GetMapping("/dashboard/inbox")
    public String inbox(Model model) {
        return table(model, "inbox", "Inbox", store.inbox(500), "Processed messages by consumer, newest first.");
    }

    private String table(Model model, String page, String title, List<Map<String, Object>> rows, String note) {
        model.addAttribute("page", page);
        model.addAttribute("title", title);
        model.addAttribute("rows", rows);
        model.addAttribute(
                "columns", rows.isEmpty() ? List.of() : List.copyOf(rows.get(0).keySet()));
        model.addAttribute("note", note + " Showing at most 500.");
        return "dashboard/table";
    }

    // --- schedules, job definitions, batches ---------------------------------------------------------

    @GetMapping("/dashboard/schedules")
    public String schedules(@RequestParam(defaultValue = "0") int p, Model model) {
        if (p < 0 || p > 100_000) {
            throw new IllegalArgumentException("p must be a page number from 0");
        }
        io.dbtasks.Page<ScheduleInfo> page = dbTasks.schedules().list(p, PAGE_SIZE);
        model.addAttribute("page", "schedules");
        model.addAttribute("schedules", page.items());
        model.addAttribute("p", p);
        model.addAttribute("hasNext", (long) (p + 1) * PAGE_SIZE < page.total());
        model.addAttribute("total", page.total());
        return "dashboard/schedules";
    }

    @PostMapping("/dashboard/schedules/{name}/{action:pause|resume|delete}")
    public String scheduleAction(@PathVariable String name, @PathVariable String action, RedirectAttributes flash) {
        Schedules schedules = dbTasks.schedules();
        try {
            switch (action) {
                case "pause" -> schedules.pause(name);
                case "resume" -> schedules.resume(name);
                default -> {
                    if (!schedules.delete(name)) {
                        throw new ScheduleNotFoundException("No schedule is named " + name);
                    }
                }
            }
        } catch (ScheduleNotFoundException e) {
            throw new TaskNotFoundException(e.getMessage());
        }
        flash.addFlashAttribute(
                "message",
                switch (action) {
                    case "pause" -> "Paused schedule " + name;
                    case "resume" -> "Resumed schedule " + name;
                    default -> "Deleted schedule " + name;
                });
        return "redirect:/dashboard/schedules";
    }

    @GetMapping("/dashboard/definitions")
    public String definitions(
            @RequestParam(required = false) String type, @RequestParam(required = false) String after, Model model) {
        Long cursor = null;
        if (after != null && !after.isBlank()) {
            cursor = parseId(after);
        }
        String businessType = type == null || type.isBlank() ? null : type.strip();
        JobPage jobs = dbTasks.jobs().list(businessType, cursor, PAGE_SIZE);
        model.addAttribute("page", "definitions");
        model.addAttribute("jobs", jobs.items());
        model.addAttribute("next", jobs.nextAfterId());
        model.addAttribute("cursor", cursor);
        model.addAttribute("type", businessType);
        model.addAttribute("jobKind", JobDefinitions.KIND);
        return "dashboard/definitions";
    }

    @GetMapping("/dashboard/definitions/{code}")
    public String definition(@PathVariable String code, @RequestParam(required = false) String before, Model model) {
        Long cursor = null;
        if (before != null && !before.isBlank()) {
            cursor = parseId(before);
        }
        io.dbtasks.job.StoredJob job = dbTasks.jobs()
                .find(code)
                .orElseThrow(() -> new TaskNotFoundException("No job definition has code '" + code + "'"));
        io.dbtasks.job.JobRunRecordPage runs = dbTasks.jobs().runs(code, cursor, PAGE_SIZE);
        model.addAttribute("page", "definitions");
        model.addAttribute("job", job);
        model.addAttribute("runs", runs.items());
        model.addAttribute("next", runs.nextBeforeRunNo());
        model.addAttribute("cursor", cursor);
        return "dashboard/definition";
    }

    @PostMapping("/dashboard/definitions/{code}/run")
    public String runDefinition(@PathVariable String code, RedirectAttributes flash) {
        JobRun run;
        try {
            run = dbTasks.jobs().run(code, true); // the operator asked for this one: run it even if it succeeded
        } catch (JobNotFoundException e) {
            throw new TaskNotFoundException(e.getMessage());
        }
        snapshots.refreshSoon();
        flash.addFlashAttribute(
                "message",
                run.duplicate()
                        ? "Job " + code + " already has a pending run: task " + run.taskId()
                        : "Job " + code + " run " + run.runNo() + " enqueued as task " + run.taskId());
        return "redirect:/dashboard/definitions";
    }

    /** One batch on the batches page: its row and its chunks by state. */
    public record BatchView(DashboardStore.BatchRow batch, BatchProgress progress) {}

    @GetMapping("/dashboard/batches")
    public String batches(Model model) {
        List<BatchView> rows = new ArrayList<>();
        for (DashboardStore.BatchRow b : store.batches(BATCH_ROWS)) {
            rows.add(new BatchView(b, dbTasks.batches().progress(b.id())));
        }
        model.addAttribute("page", "batches");
        model.addAttribute("batches", rows);
        model.addAttribute("limit", BATCH_ROWS);
        model.addAttribute("batchPrefix", Batches.KIND_PREFIX);
        return "dashboard/batches";
    }

    @PostMapping("/dashboard/batches/{id}/retry")
    public String retryBatch(@PathVariable String id, RedirectAttributes flash) {
        long batchId = parseId(id);
        int sent;
        try {
            sent = dbTasks.batches().retryFailed(batchId);
        } catch (BatchNotFoundException e) {
            throw new TaskNotFoundException(e.getMessage());
        }
        AuditDetails.touched(sent);
        snapshots.refreshSoon();
        flash.addFlashAttribute("message", "Batch " + batchId + ": " + sent + " failed chunk(s) sent back to PENDING");
        return "redirect:/dashboard/batches";
    }

    // --- workflows -----------------------------------------------------------------------------------

    /**
     * One step on a workflow's page.
     *
     * @param step the step
     * @param level its place in the graph: 0 for a step without dependencies, else one more than its
     *     deepest dependency
     */
    public record StepView(io.dbtasks.workflow.StepState step, int level) {}

    @GetMapping("/dashboard/workflows/{id}")
    public String workflow(@PathVariable String id, Model model) {
        long workflowId = parseId(id);
        io.dbtasks.workflow.WorkflowRun run = dbTasks.workflows()
                .find(workflowId)
                .orElseThrow(() -> new TaskNotFoundException("No workflow has id " + workflowId));
        java.util.Map<String, Integer> levels = new java.util.HashMap<>();
        List<StepView> steps = new ArrayList<>();
        for (io.dbtasks.workflow.StepState s : run.steps()) { // each after its dependencies
            int level = 0;
            for (io.dbtasks.workflow.Dependency d : s.dependencies()) {
                level = Math.max(level, levels.getOrDefault(d.step(), 0) + 1);
            }
            levels.put(s.name(), level);
            steps.add(new StepView(s, level));
        }
        steps.sort(java.util.Comparator.comparingInt(StepView::level));
        model.addAttribute("page", "tasks");
        model.addAttribute("workflow", run);
        model.addAttribute("steps", steps);
        model.addAttribute("showResults", payloads.showPayloads());
        return "dashboard/workflow";
    }

    @PostMapping("/dashboard/workflows/{id}/cancel")
    public String cancelWorkflow(@PathVariable String id, RedirectAttributes flash) {
        long workflowId = parseId(id);
        int n = workflowAction(() -> dbTasks.workflows().cancel(workflowId));
        AuditDetails.touched(n);
        snapshots.refreshSoon();
        flash.addFlashAttribute("message", "Workflow " + workflowId + ": " + n + " step(s) not started cancelled");
        return "redirect:/dashboard/workflows/" + workflowId;
    }

    @PostMapping("/dashboard/workflows/{id}/retry")
    public String retryWorkflow(@PathVariable String id, RedirectAttributes flash) {
        long workflowId = parseId(id);
        int n = workflowAction(() -> dbTasks.workflows().retry(workflowId));
        AuditDetails.touched(n);
        snapshots.refreshSoon();
        flash.addFlashAttribute("message", "Workflow " + workflowId + ": " + n + " failed step(s) retried");
        return "redirect:/dashboard/workflows/" + workflowId;
    }

    private static int workflowAction(java.util.function.IntSupplier action) {
        try {
            return action.getAsInt();
        } catch (io.dbtasks.workflow.WorkflowNotFoundException e) {
            throw new TaskNotFoundException(e.getMessage());
        }
    }

    // --- errors --------------------------------------------------------------------------------------

    private static long parseId(String id) {
        if (id == null || !id.matches("[0-9]{1,18}")) {
            throw new IllegalArgumentException("id must be digits only");
        }
        return Long.parseLong(id);
    }

    @ExceptionHandler(TaskNotFoundException.class)
    @ResponseStatus(HttpStatus.NOT_FOUND)
    public String notFound(TaskNotFoundException e, Model model) {
        return error(model, "Not found", e.getMessage());
    }

    @ExceptionHandler(IllegalTransitionException.class)
    @ResponseStatus(HttpStatus.CONFLICT)
    public String conflict(IllegalTransitionException e, Model model) {
        return error(model, "Not allowed in this state", e.getMessage());
    }

    @ExceptionHandler(JobDisabledException.class)
    @ResponseStatus(HttpStatus.CONFLICT)
    public String disabled(JobDisabledException e, Model model) {
        return error(model, "Not allowed in this state", e.getMessage());
    }

    @ExceptionHandler(AccessDeniedException.class)
    @ResponseStatus(HttpStatus.FORBIDDEN)
    public String forbidden(AccessDeniedException e, Model model) {
        return error(model, "Not allowed for your role", e.getMessage());
    }

    @ExceptionHandler(IllegalArgumentException.class)
    @ResponseStatus(HttpStatus.BAD_REQUEST)
    public String badRequest(IllegalArgumentException e, Model model) {
        return error(model, "Bad request", e.getMessage());
    }

    @ExceptionHandler(org.springframework.dao.QueryTimeoutException.class)
    @ResponseStatus(HttpStatus.SERVICE_UNAVAILABLE)
    public String searchTooSlow(Model model) {
        return error(
                model,
                "Search took too long",
                "The search ran longer than dbtasks.dashboard.search-timeout and was stopped. Narrow it by state,"
                        + " queue, reference, key or a time range; for payload searches on a large PostgreSQL table"
                        + " add the optional payload index described in docs/server.md.");
    }

    private static String error(Model model, String title, String message) {
        model.addAttribute("page", "");
        model.addAttribute("title", title);
        model.addAttribute("message", message);
        return "dashboard/error";
    }
}
