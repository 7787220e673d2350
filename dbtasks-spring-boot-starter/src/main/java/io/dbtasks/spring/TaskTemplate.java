package io.dbtasks.spring;

import io.dbtasks.DbTasks;
import io.dbtasks.EnqueueResult;
import io.dbtasks.TaskKind;
import io.dbtasks.TaskRequest;
import io.dbtasks.spring.actuator.TaskObservations;
import java.sql.Connection;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Enqueues tasks from application code, joining the caller's Spring transaction.
 *
 * <p>Inside a transaction that Spring manages on the engine's {@link DataSource} ({@code
 * @Transactional} with a {@code DataSourceTransactionManager}, a {@code JpaTransactionManager}, or
 * jOOQ on Spring's transaction manager), the task is written on the transaction's connection (as
 * {@link DataSourceUtils#getConnection} finds it), so it commits or rolls back with the caller's own
 * writes: a rolled-back order leaves no task, a committed one always has its task. Outside a
 * transaction (or in one Spring manages on another resource only) it behaves as {@link
 * DbTasks#enqueue(TaskRequest)}: its own short transaction.
 *
 * <p>A task of a kind with a {@link ConcurrencyKeyResolver} bean, enqueued without a concurrency key,
 * gets the key the resolver derives from its payload.
 *
 * <p>A task written inside a transaction is seen by workers after the commit: on PostgreSQL the
 * enqueue's notification is delivered then; elsewhere the workers' next poll finds it. Thread-safe.
 */
public class TaskTemplate {
    private final DbTasks dbTasks;
    private final DataSource dataSource;
    private final TaskObservations observations;
    private final java.util.Map<String, ConcurrencyKeyResolver<?>> keys;

    /**
     * @param dbTasks the engine
     * @param dataSource the DataSource the engine and the application's transactions share
     */
    public TaskTemplate(DbTasks dbTasks, DataSource dataSource) {
        this(dbTasks, dataSource, null);
    }

    /**
     * @param dbTasks the engine
     * @param dataSource the DataSource the engine and the application's transactions share
     * @param observations observes each enqueue and stores its trace context with the task; {@code
     *     null} for none
     */
    public TaskTemplate(DbTasks dbTasks, DataSource dataSource, TaskObservations observations) {
        this(dbTasks, dataSource, observations, java.util.List.of());
    }

    /**
     * @param dbTasks the engine
     * @param dataSource the DataSource the engine and the application's transactions share
     * @param observations observes each enqueue and stores its trace context with the task; {@code
     *     null} for none
     * @param keyResolvers derive the concurrency key of their kind's tasks enqueued without one
     * @throws IllegalArgumentException if two resolvers name the same kind
     */
    public TaskTemplate(
            DbTasks dbTasks,
            DataSource dataSource,
            TaskObservations observations,
            java.util.Collection<? extends ConcurrencyKeyResolver<?>> keyResolvers) {
        this.dbTasks = Objects.requireNonNull(dbTasks, "dbTasks");
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.observations = observations;
        java.util.Map<String, ConcurrencyKeyResolver<?>> byKind = new java.util.HashMap<>();
        for (ConcurrencyKeyResolver<?> r : keyResolvers) {
            ConcurrencyKeyResolver<?> before = byKind.put(Objects.requireNonNull(r.kind(), "kind of " + r), r);
            if (before != null) {
                throw new IllegalArgumentException("two concurrency key resolvers for kind " + r.kind() + ": " + before
                        + " and " + r + "; declare one per kind");
            }
        }
        this.keys = java.util.Map.copyOf(byKind);
    }

    /**
     * Enqueues one task, in the caller's transaction if there is one.
     *
     * @param request the task
     * @return the stored task, or the existing one marked duplicate for a known idempotency key
     * @throws IllegalArgumentException if the kind has a {@link ConcurrencyKeyResolver}, the request
     *     no key, and the payload is not of the resolver's type, or the key it derives is not valid
     * @throws io.dbtasks.InvalidPayloadException if the payload cannot be written as JSON
     * @throws io.dbtasks.DbTasksException if the database fails (inside a transaction the caller
     *     then decides whether to roll back)
     */
    public EnqueueResult enqueue(TaskRequest request) {
        Objects.requireNonNull(request, "request");
        request = keyed(request);
        if (observations != null) {
            return observations.enqueue(request, this::write);
        }
        return write(request);
    }

    /** The request with the key its kind's resolver derives, if it has none and the kind has one. */
    private TaskRequest keyed(TaskRequest request) {
        ConcurrencyKeyResolver<?> resolver = keys.get(request.kind());
        if (resolver == null || request.concurrencyKey() != null || request.payload() == null) {
            return request;
        }
        return request.withConcurrencyKey(keyOf(resolver, request.payload()));
    }

    private static <P> String keyOf(ConcurrencyKeyResolver<P> resolver, Object payload) {
        if (!resolver.payloadType().isInstance(payload)) {
            throw new IllegalArgumentException("the payload of kind " + resolver.kind() + " is a "
                    + payload.getClass().getName() + ", but its concurrency key resolver reads "
                    + resolver.payloadType().getName() + ": enqueue that type, or set the key on the request");
        }
        return resolver.concurrencyKey(resolver.payloadType().cast(payload));
    }

    private EnqueueResult write(TaskRequest request) {
        return inTransaction(c -> dbTasks.enqueue(c, request), () -> dbTasks.enqueue(request));
    }

    /**
     * Enqueues a task of {@code kind} with {@code payload} and the defaults.
     *
     * @param kind the kind name
     * @param payload the payload, written as JSON; may be {@code null}
     * @return the stored task
     * @throws io.dbtasks.InvalidPayloadException if the payload cannot be written as JSON
     * @throws io.dbtasks.DbTasksException if the database fails
     */
    public EnqueueResult enqueue(String kind, Object payload) {
        return enqueue(TaskRequest.of(kind, payload));
    }

    /**
     * Enqueues a task of a typed kind.
     *
     * @param kind the kind and its payload type
     * @param payload the payload; may be {@code null}
     * @param <P> the payload type
     * @return the stored task
     * @throws io.dbtasks.InvalidPayloadException if the payload cannot be written as JSON
     * @throws io.dbtasks.DbTasksException if the database fails
     */
    public <P> EnqueueResult enqueue(TaskKind<P> kind, P payload) {
        return enqueue(TaskRequest.of(kind, payload));
    }

    /**
     * Enqueues many tasks: in the caller's transaction if there is one, else in one transaction of
     * their own; all or none either way.
     *
     * @param requests the tasks
     * @return one result per request, in order
     * @throws io.dbtasks.InvalidPayloadException if a payload cannot be written as JSON
     * @throws io.dbtasks.DbTasksException if the database fails
     */
    public List<EnqueueResult> enqueueAll(List<TaskRequest> requests) {
        List<TaskRequest> copy = List.copyOf(requests).stream().map(this::keyed).toList();
        return inTransaction(c -> dbTasks.enqueueAll(c, copy), () -> dbTasks.enqueueAll(copy));
    }

    /**
     * Inserts a workflow, its steps and their dependency edges: in the caller's transaction if there
     * is one (a rollback leaves none of it), else in one transaction of its own.
     *
     * @param workflow the workflow
     * @return the stored workflow: its id and each step's task id and state
     * @throws io.dbtasks.InvalidPayloadException if a payload cannot be written as JSON
     * @throws io.dbtasks.DbTasksException if the database fails
     */
    public io.dbtasks.workflow.WorkflowRun insertWorkflow(io.dbtasks.workflow.Workflow workflow) {
        Objects.requireNonNull(workflow, "workflow");
        return inTransaction(
                c -> dbTasks.workflows().insert(c, workflow),
                () -> dbTasks.workflows().insert(workflow));
    }

    /**
     * @return whether a Spring-managed transaction holds a connection of the engine's DataSource on
     *     this thread, so an enqueue now would join it
     */
    public boolean inTransaction() {
        return TransactionSynchronizationManager.isActualTransactionActive()
                && TransactionSynchronizationManager.getResource(dataSource) != null;
    }

    /** @return the engine, for queries and operations */
    public DbTasks dbTasks() {
        return dbTasks;
    }

    private <T> T inTransaction(Function<Connection, T> joined, java.util.function.Supplier<T> alone) {
        if (!inTransaction()) {
            return alone.get();
        }
        Connection c = DataSourceUtils.getConnection(dataSource);
        try {
            return joined.apply(c);
        } finally {
            DataSourceUtils.releaseConnection(c, dataSource);
        }
    }
}
