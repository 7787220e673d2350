package io.dbtasks.spring.actuator;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskContext;
import io.dbtasks.TaskRequest;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.observation.transport.SenderContext;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Micrometer Observations around enqueue and execution that carry the trace across the database:
 * the {@code dbtasks.enqueue} observation is a sender (its tracing handler writes the W3C {@code
 * traceparent} of its span into a carrier, which is stored with the task), and the {@code
 * dbtasks.execute} observation is a receiver (its tracing handler reads that {@code traceparent}
 * back as the parent of the execution's span). Without a tracer the observations still time the two
 * (and propagate nothing). Thread-safe.
 */
public final class TaskObservations {
    /** The W3C Trace Context header name the carrier uses (https://www.w3.org/TR/trace-context/). */
    public static final String TRACEPARENT = "traceparent";

    private final ObservationRegistry registry;

    /** @param registry the application's observation registry */
    public TaskObservations(ObservationRegistry registry) {
        this.registry = registry;
    }

    /**
     * Runs {@code enqueue} inside a {@code dbtasks.enqueue} observation, with the request given the
     * observation's {@code traceparent} (unless it carries one already).
     *
     * @param request the task
     * @param enqueue writes the (possibly decorated) request
     * @param <T> what the enqueue returns
     * @return what {@code enqueue} returned
     */
    public <T> T enqueue(TaskRequest request, Function<TaskRequest, T> enqueue) {
        Map<String, String> carrier = new HashMap<>();
        SenderContext<Map<String, String>> context = new SenderContext<>((c, key, value) -> c.put(key, value));
        context.setCarrier(carrier);
        context.setRemoteServiceName("dbtasks");
        String queue = request.queue() != null ? request.queue() : DbTasks.DEFAULT_QUEUE;
        return Observation.createNotStarted("dbtasks.enqueue", () -> context, registry)
                .contextualName("enqueue " + request.kind())
                .lowCardinalityKeyValue("kind", request.kind())
                .lowCardinalityKeyValue("queue", queue)
                .observe(() -> {
                    String traceParent = carrier.get(TRACEPARENT);
                    TaskRequest r = traceParent != null && request.traceParent() == null
                            ? request.withTraceParent(traceParent)
                            : request;
                    return enqueue.apply(r);
                });
    }

    /**
     * Wraps a handler so each execution runs in a {@code dbtasks.execute} observation continuing the
     * trace stored with the task.
     *
     * @param kind the kind, for the observation's name and tags
     * @param handler the handler
     * @param <P> the payload type
     * @return the wrapping handler
     */
    public <P> io.dbtasks.TaskHandler<P> wrap(String kind, io.dbtasks.TaskHandler<P> handler) {
        return (TaskContext ctx, P payload) -> {
            Map<String, String> carrier = ctx.traceParent() == null ? Map.of() : Map.of(TRACEPARENT, ctx.traceParent());
            ReceiverContext<Map<String, String>> context = new ReceiverContext<>((c, key) -> c.get(key));
            context.setCarrier(carrier);
            context.setRemoteServiceName("dbtasks");
            Observation.createNotStarted("dbtasks.execute", () -> context, registry)
                    .contextualName("execute " + kind)
                    .lowCardinalityKeyValue("kind", kind)
                    .lowCardinalityKeyValue("queue", ctx.queue())
                    .highCardinalityKeyValue("task.id", Long.toString(ctx.taskId()))
                    .highCardinalityKeyValue("attempt", Integer.toString(ctx.attempt()))
                    .observeChecked(() -> handler.handle(ctx, payload));
        };
    }
}
