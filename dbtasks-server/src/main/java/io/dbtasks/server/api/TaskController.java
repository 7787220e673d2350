package io.dbtasks.server.api;

import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.InvalidPayloadException;
import io.dbtasks.Page;
import io.dbtasks.Task;
import io.dbtasks.TaskFilter;
import io.dbtasks.TaskKind;
import io.dbtasks.TaskNotFoundException;
import io.dbtasks.TaskQuery;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskSlice;
import io.dbtasks.TaskStatus;
import io.dbtasks.server.idempotency.IdempotencyKeyFilter;
import io.dbtasks.server.instance.LiveInstances;
import io.dbtasks.server.security.PayloadVisibility;
import io.dbtasks.server.web.Problems;
import io.dbtasks.server.web.ServerLimits;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.validation.Valid;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.TreeSet;
import org.springdoc.core.annotations.ParameterObject;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.access.AccessDeniedException;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The task API under {@code /api}: enqueue, look up, list, attempts, retry, cancel, run now and
 * stats. Errors are answered as {@code application/problem+json} by {@link ApiExceptionHandler}.
 */
@RestController
@RequestMapping("/api")
@Tag(name = "Tasks", description = "Enqueue, inspect and act on tasks")
public class TaskController {
    /** The largest page size {@code GET /api/tasks} accepts. */
    static final int MAX_PAGE_SIZE = 1000;
    /** The longest one statement of a task search may run. */
    static final java.time.Duration SEARCH_TIMEOUT = java.time.Duration.ofSeconds(15);

    private final DbTasks dbTasks;
    private final JsonMapper mapper;
    private final PayloadVisibility visibility;
    private final ServerLimits limits;
    private final LiveInstances instances;

    /**
     * @param dbTasks the engine
     * @param mapper the application's mapper, for payloads
     * @param visibility whether the caller may see payloads and stack traces
     * @param limits payload size limits
     * @param instances the live instances and the queues they serve
     */
    public TaskController(
            DbTasks dbTasks,
            JsonMapper mapper,
            PayloadVisibility visibility,
            ServerLimits limits,
            LiveInstances instances) {
        this.dbTasks = dbTasks;
        this.mapper = mapper;
        this.visibility = visibility;
        this.limits = limits;
        this.instances = instances;
    }

    /**
     * Enqueues a task after checking that its kind has a handler and its payload reads as the kind's
     * payload type.
     *
     * @param body the task
     * @param returnExisting true to get the existing task when the body's idempotency key is taken by
     *     a task of another kind or payload (else 422); the body's {@code returnExisting} does the same
     * @param request the request, for the relative Location
     * @return 201 with the new task and its relative Location; 200 with the existing task when the
     *     idempotency key is taken by a task of the same kind and payload. A {@code Warning} header
     *     says when no live instance serves the task's queue
     */
    @Operation(
            summary = "Enqueue a task",
            description =
                    "Checks the kind and that the payload reads as its type. 201 with Location (relative); 200 with the existing task when idempotencyKey is taken by the same kind and payload; 422 when taken by another, unless returnExisting=true. A Warning header says when no live instance serves the queue.")
    @ApiResponse(responseCode = "201", description = "Enqueued; Location is the task's path")
    @ApiResponse(
            responseCode = "200",
            description = "The body's idempotencyKey is taken by a task of the same kind and payload: that task")
    @PostMapping(path = "/tasks", consumes = "application/json")
    public ResponseEntity<TaskResponse> create(
            @RequestBody CreateTaskRequest body,
            @RequestParam(required = false) Boolean returnExisting,
            HttpServletRequest request) {
        if (body.kind() == null || body.kind().isBlank()) {
            throw new BadRequestException(
                    "'kind' is required: the name of a registered task kind, one of " + new TreeSet<>(dbTasks.kinds()));
        }
        if (body.kind().startsWith("dbtasks.")) {
            // Job runs, cron slots and batch chunks: made by their own endpoints, which check roles,
            // definitions and allow-lists; a task of these kinds would call any allow-listed target.
            throw new BadRequestException("Kind '" + Problems.quote(body.kind()) + "' is the engine's own; run job"
                    + " definitions through /api/jobs/{code}/runs and create batches through /api/batches");
        }
        if (!dbTasks.kinds().contains(body.kind())) {
            throw new BadRequestException("Unknown task kind '" + Problems.quote(body.kind())
                    + "'; this server handles " + new TreeSet<>(dbTasks.kinds()));
        }
        TextChecks.check("queue", body.queue());
        TextChecks.check("idempotencyKey", body.idempotencyKey());
        TextChecks.check("name", body.name());
        TextChecks.check("reference", body.reference());
        TextChecks.check("concurrencyKey", body.concurrencyKey());
        TextChecks.check("payload", body.payload());
        checkRunAt("runAt", body.runAt());
        JsonNode payload = body.payload() == null || body.payload().isNull() ? null : body.payload();
        String payloadJson = payload == null ? null : mapper.writeValueAsString(payload);
        long maxPayload = limits.getMaxPayloadSize().toBytes();
        if (payloadJson != null && payloadJson.getBytes(StandardCharsets.UTF_8).length > maxPayload) {
            throw new PayloadTooLargeException("'payload' is larger than the limit of " + maxPayload
                    + " bytes of JSON (dbtasks.server.max-payload-size)");
        }
        validatePayload(body.kind(), payload);
        // A request under an Idempotency-Key header and without a key of its own gets one derived
        // from the header, so that running it again (its first server died) finds the task.
        Object headerKey = request.getAttribute(IdempotencyKeyFilter.TASK_KEY);
        boolean derivedKey = body.idempotencyKey() == null && headerKey instanceof String;
        EnqueueResult result = dbTasks.enqueue(toRequest(body, payload, derivedKey ? (String) headerKey : null));
        TaskResponse task = response(result.task());
        HttpHeaders headers = new HttpHeaders();
        if (!instances.isServed(result.task().queue())) {
            headers.add(
                    HttpHeaders.WARNING,
                    "299 dbtasks \"No live instance serves queue '"
                            + quoteHeader(result.task().queue()) + "'; the task stays PENDING until one does\"");
        }
        if (result.duplicate()) {
            boolean sameTask = result.task().kind().equals(body.kind())
                    && Objects.equals(
                            result.task().payload() == null
                                    ? null
                                    : mapper.readTree(result.task().payload()),
                            payload);
            if (!sameTask && derivedKey) {
                // The header key was used before and expired; this is a new request with a new task.
                return create(body, returnExisting, new NoTaskKey(request));
            }
            if (!sameTask && !Boolean.TRUE.equals(returnExisting) && !Boolean.TRUE.equals(body.returnExisting())) {
                throw new IdempotencyKeyReusedException("'idempotencyKey' " + Problems.quote(body.idempotencyKey())
                        + " belongs to task " + result.task().id() + " of kind '"
                        + result.task().kind()
                        + "' with another kind or payload; use a new key, or send returnExisting=true to get that"
                        + " task");
            }
            return ResponseEntity.ok().headers(headers).body(task);
        }
        headers.setLocation(URI.create(request.getContextPath() + "/api/tasks/" + task.id()));
        return ResponseEntity.status(HttpStatus.CREATED).headers(headers).body(task);
    }

    private static String quoteHeader(String s) {
        StringBuilder sb = new StringBuilder();
        for (char c : Problems.quote(s).toCharArray()) {
            sb.append(c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? c : '?');
        }
        return sb.toString();
    }

    static void checkRunAt(String field, Instant runAt) {
        if (runAt != null && (runAt.isBefore(ServerLimits.MIN_RUN_AT) || runAt.isAfter(ServerLimits.MAX_RUN_AT))) {
            throw new BadRequestException("'" + field + "' must be between " + ServerLimits.MIN_RUN_AT + " and "
                    + ServerLimits.MAX_RUN_AT + ", got " + Problems.quote(runAt));
        }
    }

    /** Reads the payload as the kind's type, as a worker will, so a task that cannot run is refused now. */
    private void validatePayload(String kind, JsonNode payload) {
        Class<?> type = dbTasks.kind(kind).map(TaskKind::payloadType).orElse(null);
        if (payload == null && type != null && type != Void.class) {
            // The engine accepts a missing payload for any kind; these handlers cannot run without one.
            throw new BadRequestException(
                    "'payload' is required for task kind '" + kind + "' (a " + type.getSimpleName() + ")");
        }
        try {
            dbTasks.validate(kind, payload == null ? null : mapper.writeValueAsString(payload));
        } catch (InvalidPayloadException e) {
            if (e.getCause() instanceof JacksonException j) {
                throw new BadRequestException("'payload' does not fit task kind '" + kind + "'"
                        + JsonErrors.at("payload", j) + ": " + j.getOriginalMessage());
            }
            throw e;
        }
    }

    /** The request without the derived task key, for a header key that is being used anew. */
    private static final class NoTaskKey extends jakarta.servlet.http.HttpServletRequestWrapper {
        NoTaskKey(HttpServletRequest request) {
            super(request);
        }

        @Override
        public Object getAttribute(String name) {
            return IdempotencyKeyFilter.TASK_KEY.equals(name) ? null : super.getAttribute(name);
        }
    }

    private static TaskRequest toRequest(CreateTaskRequest body, JsonNode payload, String derivedKey) {
        if (body.maxAttempts() != null && body.maxAttempts() < 1) {
            throw new BadRequestException("'maxAttempts' must be at least 1, got " + body.maxAttempts());
        }
        try {
            TaskRequest.Builder b = TaskRequest.builder(body.kind())
                    .payload(payload)
                    .queue(body.queue())
                    .runAt(body.runAt())
                    .idempotencyKey(body.idempotencyKey() != null ? body.idempotencyKey() : derivedKey)
                    .name(body.name())
                    .reference(body.reference())
                    .concurrencyKey(body.concurrencyKey());
            if (body.priority() != null) {
                b.priority(body.priority());
            }
            if (body.maxAttempts() != null) {
                b.maxAttempts(body.maxAttempts());
            }
            return b.build();
        } catch (IllegalArgumentException e) {
            // TaskRequest states its own limits (lengths, blank names); they are the client's to fix.
            throw new BadRequestException(e.getMessage());
        }
    }

    /**
     * @param id the task id
     * @return the task
     * @throws TaskNotFoundException (404) if there is none
     */
    @Operation(
            summary = "Get a task",
            description = "Payload hidden (null, payloadOmitted) from viewers when configured.")
    @GetMapping("/tasks/{id}")
    public TaskResponse get(@PathVariable long id) {
        Task task = find(id);
        return response(task)
                .withWaitReason(
                        task.status() == io.dbtasks.TaskStatus.PENDING && task.concurrencyKey() != null
                                ? dbTasks.limits().waitReason(id).orElse(null)
                                : null);
    }

    /**
     * @param key an idempotency key
     * @return the task enqueued with it
     * @throws TaskNotFoundException (404) if there is none
     */
    @Operation(summary = "Get the task with an idempotency key")
    @GetMapping("/tasks/by-key/{key}")
    public TaskResponse getByKey(@PathVariable String key) {
        return response(dbTasks.findByKey(key)
                .orElseThrow(
                        () -> new TaskNotFoundException("No task has idempotency key '" + Problems.quote(key) + "'")));
    }

    /**
     * Lists tasks, newest first: by offset ({@code page}, with the total), or as a keyset search with
     * the dashboard's filters ({@code before}, with the next cursor).
     *
     * @param status only this state (case-insensitive), or all
     * @param queue only this queue, or all
     * @param kind only this kind, or all
     * @param page the zero-based page, default 0; offset paging only
     * @param size rows per page, 1 to {@value #MAX_PAGE_SIZE}, default 20
     * @param include {@code payload} for every payload in full; without it, payloads longer than
     *     {@code dbtasks.server.list-payload-limit} characters are left out ({@code payloadOmitted})
     * @param search the search filters and the keyset cursor; any of them makes a keyset search
     * @return the page: with the total count (offset), or with the next cursor (keyset)
     * @throws org.springframework.security.access.AccessDeniedException (403) for a payload search
     *     by a viewer where payloads are hidden from viewers
     */
    @Operation(
            summary = "List and search tasks, newest first",
            description = "Offset paging (page, total) by default. Any of key, reference, createdFrom, createdTo, id,"
                    + " payloadPath/payloadValue or before, or paging=keyset, makes it a keyset search: pages carry"
                    + " 'next' (pass it as 'before' for the next page; absent on the last) and no total; each page"
                    + " costs the same however deep. Payloads longer than dbtasks.server.list-payload-limit are"
                    + " left out (payloadOmitted) unless include=payload.")
    @GetMapping("/tasks")
    public PageResponse<TaskResponse> list(
            @RequestParam(required = false) String status,
            @RequestParam(required = false) String queue,
            @RequestParam(required = false) String kind,
            @RequestParam(defaultValue = "0") int page,
            @RequestParam(defaultValue = "20") int size,
            @RequestParam(required = false) String include,
            @ParameterObject @Valid TaskSearchParams search) {
        if (page < 0) {
            throw new BadRequestException("'page' must be 0 or more, got " + page);
        }
        if (size < 1 || size > MAX_PAGE_SIZE) {
            throw new BadRequestException("'size' must be 1 to " + MAX_PAGE_SIZE + ", got " + size);
        }
        if (include != null && !include.isEmpty() && !include.equals("payload")) {
            throw new BadRequestException("'include' may only be 'payload', got '" + Problems.quote(include) + "'");
        }
        int payloadLimit = "payload".equals(include) ? Integer.MAX_VALUE : limits.getListPayloadLimit();
        boolean show = visibility.showPayloads();
        if (search != null && search.isKeyset()) {
            if (page != 0) {
                throw new BadRequestException(
                        "'page' is for offset paging; a search pages with 'before' (the previous page's 'next')");
            }
            if (search.payloadPathSegments() != null && !show) {
                throw new AccessDeniedException(
                        "Searching payloads needs the operator role here (payloads are hidden from viewers)");
            }
            TaskQuery query = TaskQuery.builder()
                    .status(parseStatus(status))
                    .queue(blankToNull(queue))
                    .kind(blankToNull(kind))
                    .key(search.key())
                    .reference(search.reference())
                    .created(search.createdFromTime(), search.createdToTime())
                    .id(search.idValue())
                    .payload(search.payloadPathSegments(), search.payloadValueText())
                    .before(search.beforeValue())
                    .timeout(SEARCH_TIMEOUT)
                    .build();
            TaskSlice<Task> slice = dbTasks.search(query, size);
            List<TaskResponse> items = slice.items().stream()
                    .map(t -> TaskResponse.of(t, mapper, show, payloadLimit))
                    .toList();
            return new PageResponse<>(items, 0, size, null, slice.next());
        }
        TaskFilter filter = new TaskFilter(parseStatus(status), blankToNull(queue), blankToNull(kind));
        Page<Task> result = dbTasks.list(filter, page, size);
        List<TaskResponse> items = result.items().stream()
                .map(t -> TaskResponse.of(t, mapper, show, payloadLimit))
                .toList();
        return new PageResponse<>(items, result.page(), result.size(), result.total());
    }

    /**
     * @param id the task id
     * @return its attempts, oldest first
     * @throws TaskNotFoundException (404) if there is no such task
     */
    @Operation(
            summary = "List a task's attempts, oldest first",
            description = "Stack traces hidden from viewers when configured.")
    @GetMapping("/tasks/{id}/attempts")
    public List<AttemptResponse> attempts(@PathVariable long id) {
        find(id);
        boolean show = visibility.showPayloads();
        return dbTasks.attempts(id).stream()
                .map(a -> AttemptResponse.of(a, show))
                .toList();
    }

    /**
     * Sends a FAILED or CANCELLED task back to PENDING, due now.
     *
     * @param id the task id
     * @param additionalAttempts attempts granted beyond those made, at least 1, default 1
     * @return the task after the change
     */
    @Operation(summary = "Retry a FAILED or CANCELLED task", description = "Operator. 409 in another state.")
    @PostMapping("/tasks/{id}/retry")
    public TaskResponse retry(@PathVariable long id, @RequestParam(defaultValue = "1") int additionalAttempts) {
        if (additionalAttempts < 1) {
            throw new BadRequestException("'additionalAttempts' must be at least 1, got " + additionalAttempts);
        }
        return response(dbTasks.retry(id, additionalAttempts));
    }

    /**
     * Cancels a PENDING task at once, a RUNNING one cooperatively.
     *
     * @param id the task id
     * @return the task after the change
     */
    @Operation(
            summary = "Cancel a task",
            description = "Operator. A PENDING task at once, a RUNNING one cooperatively; 409 when finished.")
    @PostMapping("/tasks/{id}/cancel")
    public TaskResponse cancel(@PathVariable long id) {
        return response(dbTasks.cancel(id));
    }

    /**
     * Deletes a task that is not RUNNING, with its attempts.
     *
     * @param id the task id
     * @return the task as it was just before deletion
     * @throws TaskNotFoundException (404) if there is no such task
     * @throws io.dbtasks.IllegalTransitionException (409) if it is RUNNING; cancel it first
     */
    @Operation(
            summary = "Delete a task",
            description = "Admin. A task that is not RUNNING, with its attempts; 409 while it runs (cancel it first).")
    @DeleteMapping("/tasks/{id}")
    public TaskResponse delete(@PathVariable long id) {
        return response(dbTasks.delete(id));
    }

    /**
     * Moves a PENDING task's due time.
     *
     * @param id the task id
     * @param body {@code {"runAt": "2030-01-01T00:00:00Z"}}
     * @return the task after the change
     */
    @Operation(
            summary = "Reschedule a PENDING task",
            description = "Operator. runAt between 1970 and 9999; 409 in another state.")
    @PostMapping(path = "/tasks/{id}/reschedule", consumes = "application/json")
    public TaskResponse reschedule(@PathVariable long id, @RequestBody RescheduleRequest body) {
        if (body.runAt() == null) {
            throw new BadRequestException("'runAt' is required: the new due time, an ISO-8601 instant");
        }
        checkRunAt("runAt", body.runAt());
        return response(dbTasks.reschedule(id, body.runAt()));
    }

    /**
     * Makes the task with this idempotency key due now ("execute by code").
     *
     * @param key the idempotency key
     * @return the task after the change
     */
    @Operation(summary = "Run the task with this idempotency key now", description = "Operator.")
    @PostMapping("/tasks/run")
    public TaskResponse runNow(@RequestParam String key) {
        if (key.isBlank()) {
            throw new BadRequestException("'key' must not be blank");
        }
        return response(dbTasks.runNow(key));
    }

    /** @return task counts by status and attempt counts by outcome, overall and per queue */
    @Operation(summary = "Task and attempt counts", description = "By status and outcome, overall and per queue.")
    @GetMapping("/stats")
    public StatsResponse stats() {
        return StatsResponse.of(dbTasks.stats());
    }

    private TaskResponse response(Task task) {
        return TaskResponse.of(task, mapper, visibility.showPayloads(), Integer.MAX_VALUE);
    }

    private Task find(long id) {
        return dbTasks.find(id).orElseThrow(() -> new TaskNotFoundException("No task has id " + id));
    }

    private static TaskStatus parseStatus(String status) {
        if (status == null || status.isBlank()) {
            return null;
        }
        try {
            return TaskStatus.valueOf(status.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("'status' must be one of " + Arrays.toString(TaskStatus.values()) + ", got '"
                    + Problems.quote(status) + "'");
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
