package io.dbtasks.server.api;

import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.InvalidPayloadException;
import io.dbtasks.Page;
import io.dbtasks.Task;
import io.dbtasks.TaskFilter;
import io.dbtasks.TaskKind;
import io.dbtasks.TaskNotFoundException;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.server.security.PayloadVisibility;
import java.net.URI;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.support.ServletUriComponentsBuilder;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The task API under {@code /api}: enqueue, look up, list, attempts, retry, cancel, run now and
 * stats. Errors are answered as {@code application/problem+json} by {@link ApiExceptionHandler}.
 */
@RestController
@RequestMapping("/api")
public class TaskController {
    /** The largest page size {@code GET /api/tasks} accepts. */
    static final int MAX_PAGE_SIZE = 1000;

    private final DbTasks dbTasks;
    private final JsonMapper mapper;
    private final PayloadVisibility visibility;

    /**
     * @param dbTasks the engine
     * @param mapper the application's mapper, for payloads
     * @param visibility whether the caller may see payloads and stack traces
     */
    public TaskController(DbTasks dbTasks, JsonMapper mapper, PayloadVisibility visibility) {
        this.dbTasks = dbTasks;
        this.mapper = mapper;
        this.visibility = visibility;
    }

    /**
     * Enqueues a task after checking that its kind has a handler and its payload reads as the kind's
     * payload type.
     *
     * @param body the task
     * @return 201 with the new task and its Location, or 200 with the existing task when the
     *     idempotency key is already taken
     */
    @PostMapping(path = "/tasks", consumes = "application/json")
    public ResponseEntity<TaskResponse> create(@RequestBody CreateTaskRequest body) {
        if (body.kind() == null || body.kind().isBlank()) {
            throw new BadRequestException(
                    "'kind' is required: the name of a registered task kind, one of " + new TreeSet<>(dbTasks.kinds()));
        }
        if (!dbTasks.kinds().contains(body.kind())) {
            throw new BadRequestException(
                    "Unknown task kind '" + body.kind() + "'; this server handles " + new TreeSet<>(dbTasks.kinds()));
        }
        JsonNode payload = body.payload() == null || body.payload().isNull() ? null : body.payload();
        validatePayload(body.kind(), payload);
        EnqueueResult result = dbTasks.enqueue(toRequest(body, payload));
        TaskResponse task = response(result.task());
        if (result.duplicate()) {
            return ResponseEntity.ok(task);
        }
        URI location = ServletUriComponentsBuilder.fromCurrentRequestUri()
                .path("/{id}")
                .buildAndExpand(task.id())
                .toUri();
        return ResponseEntity.created(location).body(task);
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

    private static TaskRequest toRequest(CreateTaskRequest body, JsonNode payload) {
        if (body.maxAttempts() != null && body.maxAttempts() < 1) {
            throw new BadRequestException("'maxAttempts' must be at least 1, got " + body.maxAttempts());
        }
        try {
            TaskRequest.Builder b = TaskRequest.builder(body.kind())
                    .payload(payload)
                    .queue(body.queue())
                    .runAt(body.runAt())
                    .idempotencyKey(body.idempotencyKey())
                    .name(body.name())
                    .reference(body.reference());
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
    @GetMapping("/tasks/{id}")
    public TaskResponse get(@PathVariable long id) {
        return response(find(id));
    }

    /**
     * @param key an idempotency key
     * @return the task enqueued with it
     * @throws TaskNotFoundException (404) if there is none
     */
    @GetMapping("/tasks/by-key/{key}")
    public TaskResponse getByKey(@PathVariable String key) {
        return response(dbTasks.findByKey(key)
                .orElseThrow(() -> new TaskNotFoundException("No task has idempotency key '" + key + "'")));
    }

    /**
     * Lists tasks, newest first.
     *
     * @param status only this state (case-insensitive), or all
     * @param queue only this queue, or all
     * @param kind only this kind, or all
     * @param page the zero-based page, default 0
     * @param size rows per page, 1 to {@value #MAX_PAGE_SIZE}, default 20
     * @return the page and the total count
     */
    @GetMapping("/tasks")
    public PageResponse<TaskResponse> list(
            @RequestParam(required = false) String status,
            @RequestParam(required = false) String queue,
            @RequestParam(required = false) String kind,
            @RequestParam(defaultValue = "0") int page,
            @RequestParam(defaultValue = "20") int size) {
        if (page < 0) {
            throw new BadRequestException("'page' must be 0 or more, got " + page);
        }
        if (size < 1 || size > MAX_PAGE_SIZE) {
            throw new BadRequestException("'size' must be 1 to " + MAX_PAGE_SIZE + ", got " + size);
        }
        TaskFilter filter = new TaskFilter(parseStatus(status), blankToNull(queue), blankToNull(kind));
        Page<Task> result = dbTasks.list(filter, page, size);
        List<TaskResponse> items = result.items().stream().map(this::response).toList();
        return new PageResponse<>(items, result.page(), result.size(), result.total());
    }

    /**
     * @param id the task id
     * @return its attempts, oldest first
     * @throws TaskNotFoundException (404) if there is no such task
     */
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
    @PostMapping("/tasks/{id}/cancel")
    public TaskResponse cancel(@PathVariable long id) {
        return response(dbTasks.cancel(id));
    }

    /**
     * Makes the task with this idempotency key due now (the seed's "execute by code").
     *
     * @param key the idempotency key
     * @return the task after the change
     */
    @PostMapping("/tasks/run")
    public TaskResponse runNow(@RequestParam String key) {
        if (key.isBlank()) {
            throw new BadRequestException("'key' must not be blank");
        }
        return response(dbTasks.runNow(key));
    }

    /** @return task counts by status and attempt counts by outcome, overall and per queue */
    @GetMapping("/stats")
    public StatsResponse stats() {
        return StatsResponse.of(dbTasks.stats());
    }

    private TaskResponse response(Task task) {
        return TaskResponse.of(task, mapper, visibility.showPayloads());
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
            throw new BadRequestException(
                    "'status' must be one of " + Arrays.toString(TaskStatus.values()) + ", got '" + status + "'");
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
