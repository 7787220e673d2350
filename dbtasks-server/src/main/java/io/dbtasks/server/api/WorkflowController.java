package io.dbtasks.server.api;

import io.dbtasks.DbTasks;
import io.dbtasks.InvalidPayloadException;
import io.dbtasks.TaskKind;
import io.dbtasks.TaskRequest;
import io.dbtasks.server.audit.AuditDetails;
import io.dbtasks.server.security.PayloadVisibility;
import io.dbtasks.server.web.Problems;
import io.dbtasks.server.web.ServerLimits;
import io.dbtasks.workflow.Dependency;
import io.dbtasks.workflow.StepState;
import io.dbtasks.workflow.Workflow;
import io.dbtasks.workflow.WorkflowNotFoundException;
import io.dbtasks.workflow.WorkflowRun;
import io.swagger.v3.oas.annotations.tags.Tag;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The workflow API under {@code /api/workflows}: insert a workflow, read its steps, cancel what has
 * not started, retry its failed steps. Errors are answered as {@code application/problem+json}.
 */
@RestController
@RequestMapping("/api")
@Tag(name = "Workflows", description = "Insert, inspect, cancel and retry workflows of dependent steps")
public class WorkflowController {
    private final DbTasks dbTasks;
    private final JsonMapper mapper;
    private final PayloadVisibility visibility;
    private final ServerLimits limits;

    /**
     * @param dbTasks the engine
     * @param mapper the application's mapper, for payloads and results
     * @param visibility whether the caller may see payloads and results
     * @param limits payload size limits
     */
    public WorkflowController(DbTasks dbTasks, JsonMapper mapper, PayloadVisibility visibility, ServerLimits limits) {
        this.dbTasks = dbTasks;
        this.mapper = mapper;
        this.visibility = visibility;
        this.limits = limits;
    }

    /**
     * One dependency edge as posted.
     *
     * @param step the step waited for
     * @param onFailure {@code CANCEL} (the default), {@code RUN} or {@code RUN_IF_ANY_FAILED}
     */
    public record DependencyBody(String step, String onFailure) {}

    /**
     * One step as posted.
     *
     * @param name its name, unique in the workflow
     * @param kind a registered task kind
     * @param payload its payload, or {@code null}
     * @param queue its queue, or {@code null} for the default
     * @param maxAttempts its attempts, or {@code null} for the default
     * @param dependsOn the steps it waits for
     */
    public record StepBody(
            String name,
            String kind,
            JsonNode payload,
            String queue,
            Integer maxAttempts,
            List<DependencyBody> dependsOn) {}

    /**
     * A workflow as posted.
     *
     * @param name its display name
     * @param steps its steps
     */
    public record WorkflowBody(String name, List<StepBody> steps) {}

    /**
     * One step as answered.
     *
     * @param name its name
     * @param taskId its task ({@code /api/tasks/{id}}, its attempts)
     * @param status its state
     * @param dependsOn the steps it waits for
     * @param result its stored result as JSON (text where it is not JSON), or {@code null}; hidden
     *     from callers who may not see payloads
     * @param lastError its last error, or {@code null}
     */
    public record StepResponse(
            String name,
            long taskId,
            String status,
            List<DependencyBody> dependsOn,
            JsonNode result,
            String lastError) {}

    /**
     * A workflow as answered.
     *
     * @param id its id
     * @param name its name
     * @param createdAt when it was inserted
     * @param steps its steps, each after its dependencies
     */
    public record WorkflowResponse(long id, String name, Instant createdAt, List<StepResponse> steps) {}

    /**
     * Inserts a workflow in one transaction.
     *
     * @param body the workflow
     * @param request the request, for the Location header
     * @return 201 with the stored workflow
     */
    @PostMapping(path = "/workflows", consumes = "application/json")
    public ResponseEntity<WorkflowResponse> insert(@RequestBody WorkflowBody body, HttpServletRequest request) {
        if (body.name() == null) {
            throw new BadRequestException("'name' is required: the workflow's display name");
        }
        if (body.steps() == null || body.steps().isEmpty()) {
            throw new BadRequestException("'steps' is required: at least one step, each with a name and a kind");
        }
        Workflow workflow;
        try {
            Workflow.Builder b = Workflow.named(body.name());
            for (StepBody s : body.steps()) {
                if (s == null || s.name() == null) {
                    throw new BadRequestException("Each step needs a 'name', unique in the workflow");
                }
                List<Dependency> dependencies = new ArrayList<>();
                for (DependencyBody d : s.dependsOn() == null ? List.<DependencyBody>of() : s.dependsOn()) {
                    if (d == null || d.step() == null) {
                        throw new BadRequestException(
                                "Each entry of 'dependsOn' of step '" + Problems.quote(s.name()) + "' needs a 'step'");
                    }
                    dependencies.add(new Dependency(d.step(), onFailure(d.onFailure())));
                }
                b.step(s.name(), request(s), dependencies.toArray(new Dependency[0]));
            }
            workflow = b.build();
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(e.getMessage());
        }
        WorkflowRun run = dbTasks.workflows().insert(workflow);
        AuditDetails.touched(run.steps().size());
        URI location = URI.create(request.getContextPath() + "/api/workflows/" + run.id());
        return ResponseEntity.created(location).body(response(run));
    }

    /**
     * @param id the workflow id
     * @return the workflow with each step's state, dependencies and result
     */
    @GetMapping("/workflows/{id}")
    public WorkflowResponse find(@PathVariable long id) {
        return response(dbTasks.workflows()
                .find(id)
                .orElseThrow(() -> new WorkflowNotFoundException("No workflow has id " + id)));
    }

    /**
     * Cancels the steps of the workflow that have not started.
     *
     * @param id the workflow id
     * @return the number of steps cancelled
     */
    @PostMapping("/workflows/{id}/cancellations")
    public Map<String, Integer> cancel(@PathVariable long id) {
        int cancelled = dbTasks.workflows().cancel(id);
        AuditDetails.touched(cancelled);
        return Map.of("cancelled", cancelled);
    }

    /**
     * Retries the failed steps of the workflow; the steps their failures cancelled wait again.
     *
     * @param id the workflow id
     * @return the number of steps retried
     */
    @PostMapping("/workflows/{id}/retries")
    public Map<String, Integer> retry(@PathVariable long id) {
        int retried = dbTasks.workflows().retry(id);
        AuditDetails.touched(retried);
        return Map.of("retried", retried);
    }

    private static Dependency.OnFailure onFailure(String text) {
        if (text == null) {
            return Dependency.OnFailure.CANCEL;
        }
        try {
            return Dependency.OnFailure.valueOf(text);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("'onFailure' must be one of "
                    + java.util.Arrays.toString(Dependency.OnFailure.values()) + ", got '" + Problems.quote(text)
                    + "'");
        }
    }

    private TaskRequest request(StepBody s) {
        String where = "step '" + Problems.quote(s.name()) + "'";
        if (s.kind() == null
                || s.kind().startsWith("dbtasks.")
                || !dbTasks.kinds().contains(s.kind())) {
            throw new BadRequestException("'kind' of " + where + " must name a registered task kind, one of "
                    + new TreeSet<>(dbTasks.kinds().stream()
                            .filter(k -> !k.startsWith("dbtasks."))
                            .toList()));
        }
        TextChecks.check("queue", s.queue());
        TextChecks.check("payload", s.payload());
        JsonNode payload = s.payload() == null || s.payload().isNull() ? null : s.payload();
        String json = payload == null ? null : mapper.writeValueAsString(payload);
        long max = limits.getMaxPayloadSize().toBytes();
        if (json != null && json.getBytes(StandardCharsets.UTF_8).length > max) {
            throw new PayloadTooLargeException("'payload' of " + where + " is larger than the limit of " + max
                    + " bytes of JSON (dbtasks.server.max-payload-size)");
        }
        Class<?> type = dbTasks.kind(s.kind()).map(TaskKind::payloadType).orElse(null);
        if (payload == null && type != null && type != Void.class) {
            throw new BadRequestException("'payload' of " + where + " is required for task kind '" + s.kind() + "'");
        }
        try {
            dbTasks.validate(s.kind(), json);
        } catch (InvalidPayloadException e) {
            if (e.getCause() instanceof JacksonException j) {
                throw new BadRequestException("'payload' of " + where + " does not fit task kind '" + s.kind() + "': "
                        + j.getOriginalMessage());
            }
            throw e;
        }
        if (s.maxAttempts() != null && s.maxAttempts() < 1) {
            throw new BadRequestException("'maxAttempts' of " + where + " must be at least 1");
        }
        TaskRequest.Builder b = TaskRequest.builder(s.kind()).payload(payload).queue(s.queue());
        if (s.maxAttempts() != null) {
            b.maxAttempts(s.maxAttempts());
        }
        return b.build();
    }

    private WorkflowResponse response(WorkflowRun run) {
        boolean show = visibility.showPayloads();
        List<StepResponse> steps = new ArrayList<>(run.steps().size());
        for (StepState s : run.steps()) {
            List<DependencyBody> deps = new ArrayList<>();
            for (Dependency d : s.dependencies()) {
                deps.add(new DependencyBody(d.step(), d.onFailure().name()));
            }
            steps.add(new StepResponse(
                    s.name(), s.taskId(), s.status().name(), deps, show ? result(s.result()) : null, s.lastError()));
        }
        return new WorkflowResponse(run.id(), run.name(), run.createdAt(), steps);
    }

    private JsonNode result(String text) {
        if (text == null) {
            return null;
        }
        try {
            return mapper.readTree(text);
        } catch (JacksonException notJson) {
            return mapper.getNodeFactory().stringNode(text);
        }
    }
}
