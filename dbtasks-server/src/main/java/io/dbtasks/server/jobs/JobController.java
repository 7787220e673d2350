package io.dbtasks.server.jobs;

import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.WorkerInfo;
import io.dbtasks.batch.Batch;
import io.dbtasks.batch.BatchRequest;
import io.dbtasks.batch.Batches;
import io.dbtasks.job.JobDefinition;
import io.dbtasks.job.JobNotFoundException;
import io.dbtasks.job.JobPage;
import io.dbtasks.job.JobRun;
import io.dbtasks.job.JobRunRecordPage;
import io.dbtasks.job.JobRunSummary;
import io.dbtasks.job.JobTarget;
import io.dbtasks.job.StoredJob;
import io.dbtasks.server.api.BadRequestException;
import io.dbtasks.server.audit.AuditDetails;
import io.dbtasks.server.instance.LiveInstances;
import io.dbtasks.server.security.PayloadVisibility;
import io.dbtasks.spring.autoconfigure.TaskMethodRegistrar;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.util.UriComponentsBuilder;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Job definitions and chunked batches under {@code /api}: definitions' CRUD by code, a run by code,
 * bulk runs (a business type, a list of codes, the failures), the allow-listed targets, and batches
 * (create, progress, retry failed chunks). Errors are {@code application/problem+json}.
 */
@RestController
@RequestMapping("/api")
public class JobController {
    /** The largest page {@code GET /api/jobs} returns. */
    static final int MAX_LIMIT = 1000;

    private final DbTasks dbTasks;
    private final JsonMapper mapper;
    private final ObjectProvider<TaskMethodRegistrar> targets;
    private final LiveInstances liveInstances;
    private final PayloadVisibility visibility;

    /**
     * @param dbTasks the engine
     * @param mapper writes arguments and parameters back to text
     * @param targets the allow-list, if the starter built one
     * @param liveInstances the live engines, whose worker rows advertise their job targets
     * @param visibility whether the caller may see arguments and parameters (payloads)
     */
    public JobController(
            DbTasks dbTasks,
            JsonMapper mapper,
            ObjectProvider<TaskMethodRegistrar> targets,
            LiveInstances liveInstances,
            PayloadVisibility visibility) {
        this.dbTasks = dbTasks;
        this.mapper = mapper;
        this.targets = targets;
        this.liveInstances = liveInstances;
        this.visibility = visibility;
    }

    /**
     * @param businessType only this business type, or none for all
     * @param after the {@code nextAfter} of the previous page, or none for the first
     * @param limit definitions per page, 1 to 1000
     * @return a keyset page in id order, with {@code nextAfter} (null on the last page)
     */
    @GetMapping("/jobs")
    public Map<String, Object> list(
            @RequestParam(required = false) String businessType,
            @RequestParam(required = false) Long after,
            @RequestParam(defaultValue = "50") int limit) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new BadRequestException("'limit' must be 1 to " + MAX_LIMIT + ", got " + limit);
        }
        JobPage page = dbTasks.jobs().list(blankToNull(businessType), after, limit);
        java.util.LinkedHashMap<String, Object> body = new java.util.LinkedHashMap<>();
        boolean show = visibility.showPayloads();
        body.put(
                "items",
                page.items().stream().map(j -> JobResponse.of(j, mapper, show)).toList());
        body.put("nextAfter", page.nextAfterId());
        return body;
    }

    /**
     * @param body the definition
     * @return 201 with the definition and its Location
     */
    @PostMapping(path = "/jobs", consumes = "application/json")
    public ResponseEntity<JobResponse> create(@RequestBody JobRequest body, HttpServletRequest request) {
        if (body.code() == null || body.code().isBlank()) {
            throw new BadRequestException("'code' is required: the job's unique code, such as sync_order_job");
        }
        StoredJob job = dbTasks.jobs().create(definition(body.code(), body));
        URI location = relative(request, "/api/jobs/{code}", job.definition().code());
        return ResponseEntity.created(location).body(JobResponse.of(job, mapper, visibility.showPayloads()));
    }

    /**
     * @param code the code
     * @return the definition with its last run
     */
    @GetMapping("/jobs/{code}")
    public JobResponse get(@PathVariable String code) {
        return JobResponse.of(
                dbTasks.jobs().find(code).orElseThrow(() -> new JobNotFoundException(code)),
                mapper,
                visibility.showPayloads());
    }

    /**
     * Replaces a definition; runs already enqueued keep what they were enqueued with.
     *
     * @param code the code
     * @param body the new content
     * @return the definition
     */
    @PutMapping(path = "/jobs/{code}", consumes = "application/json")
    public JobResponse update(@PathVariable String code, @RequestBody JobRequest body) {
        if (body.code() != null && !body.code().equals(code)) {
            throw new BadRequestException("The body's code '" + body.code() + "' differs from the path's '" + code
                    + "'; a job's code cannot change: create a new job and delete this one");
        }
        return JobResponse.of(dbTasks.jobs().update(definition(code, body)), mapper, visibility.showPayloads());
    }

    /**
     * @param code the code
     * @return 204, or 404 if there was no such definition
     */
    @DeleteMapping("/jobs/{code}")
    public ResponseEntity<Void> delete(@PathVariable String code) {
        if (!dbTasks.jobs().delete(code)) {
            throw new JobNotFoundException(code);
        }
        return ResponseEntity.noContent().build();
    }

    /**
     * The runs recorded under a code, newest first: number, task, enqueue, start and finish times,
     * outcome, duration, retries and last error.
     *
     * @param code the code
     * @param before the {@code nextBefore} of the previous page, or none for the newest page
     * @param limit runs per page, 1 to 1000
     * @return a keyset page with {@code nextBefore} (null on the last page); 404 if no definition has
     *     the code and no run was recorded under it
     */
    @GetMapping("/jobs/{code}/runs")
    @io.swagger.v3.oas.annotations.Operation(
            summary = "List a job definition's runs, newest first",
            description = "Keyset pages of the runs recorded under the code: runNo, taskId, enqueuedAt,"
                    + " startedAt (the first attempt's start), finishedAt, outcome (the task's state, null once"
                    + " retention removed it), durationMillis (start to finish, retries' waits included),"
                    + " retries (attempts - 1) and error (the last one). Pass nextBefore as before for the next"
                    + " (older) page. Viewer role.")
    public Map<String, Object> runs(
            @PathVariable String code,
            @RequestParam(required = false) Long before,
            @RequestParam(defaultValue = "50") int limit) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new BadRequestException("'limit' must be 1 to " + MAX_LIMIT + ", got " + limit);
        }
        JobRunRecordPage page = dbTasks.jobs().runs(code, before, limit);
        if (page.items().isEmpty()
                && before == null
                && dbTasks.jobs().find(code).isEmpty()) {
            throw new JobNotFoundException(code);
        }
        java.util.LinkedHashMap<String, Object> body = new java.util.LinkedHashMap<>();
        body.put("items", page.items().stream().map(JobRunResponse::of).toList());
        body.put("nextBefore", page.nextBeforeRunNo());
        return body;
    }

    /**
     * Runs one definition now, unless its last run is still pending or, by default, has succeeded.
     *
     * @param code the code
     * @param rerunSucceeded {@code true} to run it even if its last run SUCCEEDED
     * @return 202 with the new run, or 200 with the run still pending ({@code duplicate: true}) or
     *     the succeeded one ({@code alreadySucceeded: true})
     */
    @PostMapping("/jobs/{code}/runs")
    @io.swagger.v3.oas.annotations.Operation(
            summary = "Run a job definition now",
            description = "Enqueues a run unless the last run is still PENDING or RUNNING (200, duplicate: true) or"
                    + " has SUCCEEDED (200, alreadySucceeded: true); rerunSucceeded=true runs a succeeded"
                    + " definition again.")
    public ResponseEntity<JobRun> run(
            @PathVariable String code, @RequestParam(defaultValue = "false") boolean rerunSucceeded) {
        JobRun run = dbTasks.jobs().run(code, rerunSucceeded);
        return ResponseEntity.status(run.enqueued() ? HttpStatus.ACCEPTED : HttpStatus.OK)
                .body(run);
    }

    /**
     * Runs many definitions: every one of a business type or a list of codes not yet succeeded (all
     * of them with {@code rerunSucceeded: true}), or the failures.
     *
     * @param body exactly one selection
     * @return 202 with the counts
     */
    @PostMapping(path = "/job-runs", consumes = "application/json")
    @io.swagger.v3.oas.annotations.Operation(
            summary = "Run many job definitions",
            description = "Exactly one of {\"businessType\": \"order\"}, {\"codes\": [\"a\", \"b\"]} or"
                    + " {\"failed\": true} (optionally with businessType). By business type and by codes, only"
                    + " definitions whose last run has not SUCCEEDED are run (the others are counted in"
                    + " alreadySucceeded); add \"rerunSucceeded\": true to run those again. Definitions whose last"
                    + " run is still PENDING or RUNNING are never run twice (alreadyQueued).")
    public ResponseEntity<JobRunSummary> runMany(@RequestBody JobRunsRequest body) {
        boolean failed = Boolean.TRUE.equals(body.failed());
        boolean byCodes = body.codes() != null;
        boolean byType = body.businessType() != null && !failed;
        int selections = (failed ? 1 : 0) + (byCodes ? 1 : 0) + (byType ? 1 : 0);
        if (selections != 1) {
            throw new BadRequestException(
                    "Give exactly one of {\"businessType\": \"order\"}, {\"codes\": [\"a\", \"b\"]}"
                            + " or {\"failed\": true} (optionally with \"businessType\")");
        }
        boolean rerunSucceeded = Boolean.TRUE.equals(body.rerunSucceeded());
        if (failed && body.rerunSucceeded() != null) {
            throw new BadRequestException(
                    "'rerunSucceeded' applies to runs by businessType or codes; {\"failed\": true} runs only failures");
        }
        AuditDetails.filter(
                failed
                        ? "failed"
                                + (blankToNull(body.businessType()) == null
                                        ? ""
                                        : ", businessType=" + body.businessType())
                        : byCodes ? "codes=" + body.codes() : "businessType=" + body.businessType());
        JobRunSummary summary;
        if (failed) {
            summary = dbTasks.jobs().rerunFailed(blankToNull(body.businessType()));
        } else if (byCodes) {
            if (body.codes().isEmpty() || body.codes().stream().anyMatch(c -> c == null || c.isBlank())) {
                throw new BadRequestException("'codes' must be a non-empty list of job codes, none blank");
            }
            summary = dbTasks.jobs().runCodes(body.codes(), rerunSucceeded);
        } else {
            if (body.businessType().isBlank()) {
                throw new BadRequestException("'businessType' must not be blank");
            }
            summary = dbTasks.jobs().runBusinessType(body.businessType(), rerunSucceeded);
        }
        AuditDetails.touched(summary.enqueued());
        return ResponseEntity.status(HttpStatus.ACCEPTED).body(summary);
    }

    /**
     * The methods job definitions may call: those this server allow-lists and those every live
     * engine sharing its database advertises in its worker row, so a server beside an application
     * lists the application's targets too.
     *
     * @param queue only the targets of live engines that work this queue (this server's own are
     *     then included only if it works the queue); all when absent
     * @return the targets as {@code bean.method(types)}, sorted, each once
     */
    @GetMapping("/job-targets")
    public List<String> targets(@RequestParam(required = false) String queue) {
        TreeSet<String> all = new TreeSet<>();
        TaskMethodRegistrar registrar = targets.getIfAvailable();
        if (registrar != null && queue == null) {
            all.addAll(registrar.allowed());
        }
        for (WorkerInfo w : liveInstances.live()) {
            if (w.jobTargets() != null && (queue == null || w.queues().containsKey(queue))) {
                all.addAll(w.jobTargets());
            }
        }
        return List.copyOf(all);
    }

    /**
     * Creates a chunked batch.
     *
     * @param body the batch
     * @return 201 with the batch and its progress, or 200 with the existing one for a key posted before
     */
    @PostMapping(path = "/batches", consumes = "application/json")
    public ResponseEntity<BatchResponse> createBatch(@RequestBody BatchCreateRequest body, HttpServletRequest request) {
        TreeSet<String> kinds = new TreeSet<>();
        dbTasks.kinds().stream()
                .filter(k -> k.startsWith(Batches.KIND_PREFIX))
                .forEach(k -> kinds.add(k.substring(Batches.KIND_PREFIX.length())));
        if (body.kind() == null || !kinds.contains(body.kind())) {
            throw new BadRequestException(
                    "'kind' must name a batch kind this server has a chunk handler for: one of " + kinds);
        }
        if (body.chunks() == null) {
            throw new BadRequestException(
                    "'chunks' is required: the number of chunks, 1 to " + BatchRequest.MAX_CHUNKS);
        }
        BatchRequest.Builder b = BatchRequest.builder(body.kind(), body.chunks())
                .params(body.params() == null || body.params().isNull() ? null : body.params())
                .name(body.name())
                .idempotencyKey(body.idempotencyKey());
        if (body.maxAttempts() != null) {
            b.maxAttempts(body.maxAttempts());
        }
        Batch batch = dbTasks.batches().create(b.build());
        BatchResponse response =
                BatchResponse.of(batch, dbTasks.batches().progress(batch.id()), mapper, visibility.showPayloads());
        if (batch.duplicate()) {
            return ResponseEntity.ok(response);
        }
        URI location = relative(request, "/api/batches/{id}", batch.id());
        return ResponseEntity.created(location).body(response);
    }

    /**
     * @param id the batch id
     * @return the batch with its progress
     */
    @GetMapping("/batches/{id}")
    public BatchResponse batch(@PathVariable long id) {
        Batch batch = dbTasks.batches().find(id).orElseThrow(() -> new io.dbtasks.batch.BatchNotFoundException(id));
        return BatchResponse.of(batch, dbTasks.batches().progress(id), mapper, visibility.showPayloads());
    }

    /**
     * Sends the batch's failed chunks back to run.
     *
     * @param id the batch id
     * @return the number of chunks sent back
     */
    @PostMapping("/batches/{id}/retries")
    public Map<String, Integer> retryBatch(@PathVariable long id) {
        int retried = dbTasks.batches().retryFailed(id);
        AuditDetails.touched(retried);
        return Map.of("retried", retried);
    }

    private JobDefinition definition(String code, JobRequest body) {
        require(body.businessType(), "businessType", "the business type runs are grouped by, such as order");
        require(body.bean(), "bean", "the target bean's name, such as orderService");
        require(body.method(), "method", "the target method's name, such as syncOrder");
        JsonNode args = body.arguments();
        if (args != null && !args.isNull() && !args.isArray()) {
            throw new BadRequestException(
                    "'arguments' must be a JSON array with one element per parameter, such as" + " [10001, \"admin\"]");
        }
        if (body.retryDelayMillis() != null && body.retryDelayMillis() < 0) {
            throw new BadRequestException("'retryDelayMillis' must not be negative");
        }
        List<String> types = body.parameterTypes() == null ? List.of() : body.parameterTypes();
        if (types.stream().anyMatch(t -> t == null || t.isBlank())) {
            throw new BadRequestException("'parameterTypes' must not contain blank or null entries");
        }
        JobDefinition.Builder b = JobDefinition.builder(code)
                .description(body.description())
                .business(body.businessType(), body.businessId())
                .target(new JobTarget(body.bean(), body.method(), types))
                .arguments(args == null || args.isNull() ? "[]" : mapper.writeValueAsString(args))
                .queue(blankToNull(body.queue()))
                .cron(blankToNull(body.cron()), blankToNull(body.timeZone()))
                .enabled(body.enabled() == null || body.enabled());
        if (body.name() != null) {
            b.name(body.name());
        }
        if (body.maxAttempts() != null) {
            b.maxAttempts(body.maxAttempts());
        }
        if (body.retryDelayMillis() != null) {
            b.retryPolicy(RetryPolicy.fixed(Duration.ofMillis(body.retryDelayMillis())));
        }
        return b.build();
    }

    /**
     * A Location relative to this server (path only), as for tasks: built from the request's Host
     * header it would echo whatever host a client or a proxy sent.
     */
    private static URI relative(HttpServletRequest request, String template, Object variable) {
        return UriComponentsBuilder.fromPath(request.getContextPath() + template)
                .buildAndExpand(variable)
                .encode()
                .toUri();
    }

    private static void require(String value, String field, String what) {
        if (value == null || value.isBlank()) {
            throw new BadRequestException("'" + field + "' is required: " + what);
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
