package io.dbtasks;

import io.dbtasks.batch.Batches;
import io.dbtasks.batch.ChunkHandler;
import io.dbtasks.event.TaskEventListener;
import io.dbtasks.inbox.Inbox;
import io.dbtasks.internal.DeferredEngine;
import io.dbtasks.internal.Engine;
import io.dbtasks.internal.EngineSettings;
import io.dbtasks.internal.batch.ChunkPayload;
import io.dbtasks.internal.batch.ChunkTaskHandler;
import io.dbtasks.internal.execution.HandlerRegistry;
import io.dbtasks.internal.job.JobCronHandler;
import io.dbtasks.internal.job.JobCronPayload;
import io.dbtasks.internal.job.JobTaskHandler;
import io.dbtasks.internal.job.JobTaskPayload;
import io.dbtasks.internal.schedule.ScheduleConfig;
import io.dbtasks.internal.support.EngineConfig;
import io.dbtasks.job.JobDefinitions;
import io.dbtasks.job.JobTargetInvoker;
import io.dbtasks.limit.Limits;
import io.dbtasks.lock.LeaseLocks;
import io.dbtasks.once.RunOnceGuards;
import io.dbtasks.schedule.Schedule;
import io.dbtasks.schedule.Schedules;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.json.JsonMapper;

/**
 * The one entry point of dbtasks: enqueue tasks, run workers, query and operate on tasks.
 *
 * <p>Build one per application with {@link #builder(DataSource)}. {@link Builder#build()} migrates
 * the schema (its own Flyway history table, {@code dbtasks_schema_history}) so tasks can be enqueued
 * at once, or, when the database cannot be reached yet, as soon as it can; {@link #start()} starts the workers; {@link #close()} stops them gracefully. Any number
 * of engines, in any number of processes, may share one database: each task is claimed by one worker
 * at a time under a lease with a fencing token. The same database also holds the idempotency
 * toolkit: {@link #guards()}, {@link #inbox()} and {@link #locks()}, and the recurring schedules,
 * {@link #schedules()}, whose slots every started engine enqueues, each slot once across the cluster.
 *
 * <p>Instances are thread-safe.
 */
public final class DbTasks implements AutoCloseable {
    /** The queue tasks go to when the request names none: {@link TaskRequest#DEFAULT_QUEUE}. */
    public static final String DEFAULT_QUEUE = TaskRequest.DEFAULT_QUEUE;
    /** Workers per queue when the builder names no queues. */
    public static final int DEFAULT_CONCURRENCY = 4;
    /** Attempts a task gets when its request does not say. */
    public static final int DEFAULT_MAX_ATTEMPTS = TaskOptions.DEFAULT_MAX_ATTEMPTS;
    /** How long a claim holds a task before another worker may rescue it. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    /** How often an idle worker looks for due tasks (sooner when woken by a local enqueue). */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(500);
    /** The least time between two wake-ups of other instances that enqueues into one queue send. */
    public static final Duration DEFAULT_ENQUEUE_SIGNAL_INTERVAL = Duration.ofMillis(5);
    /** How often expired leases are looked for. */
    public static final Duration DEFAULT_RESCUE_INTERVAL = Duration.ofSeconds(10);
    /** How long {@link #close()} waits for running tasks before handing them back. */
    public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);
    /**
     * How often, on PostgreSQL, an engine checks the task table for dead rows and vacuums it (see
     * {@link Builder#vacuumInterval(Duration)}).
     */
    public static final Duration DEFAULT_VACUUM_INTERVAL = Duration.ofSeconds(15);
    /** The default {@link Builder#statementTimeout}: 30 s. */
    public static final Duration DEFAULT_STATEMENT_TIMEOUT = Duration.ofSeconds(30);
    /** How long SUCCEEDED tasks are kept by default before retention deletes them. */
    public static final Duration DEFAULT_SUCCEEDED_RETENTION = Duration.ofDays(7);
    /** How long FAILED and CANCELLED tasks are kept by default before retention deletes them. */
    public static final Duration DEFAULT_FAILED_RETENTION = Duration.ofDays(30);
    /** How often retention sweeps by default. */
    public static final Duration DEFAULT_RETENTION_INTERVAL = Duration.ofMinutes(15);
    /** The most tasks one claim statement takes. */
    public static final int DEFAULT_CLAIM_BATCH = 250;
    /**
     * The longest a started engine waits between two looks for due schedule slots. It sleeps until
     * the earliest next slot it knows of, so this only bounds how late it notices a schedule created
     * or changed on another engine.
     */
    public static final Duration DEFAULT_SCHEDULE_POLL_INTERVAL = Duration.ofSeconds(1);
    /** The most schedules one poll transaction locks, enqueues and advances. */
    public static final int DEFAULT_SCHEDULE_BATCH = 250;
    /** How long due tasks that no live engine of their queue can run wait before they are failed. */
    public static final Duration DEFAULT_UNCLAIMABLE_GRACE = Duration.ofMinutes(10);

    private final DeferredEngine engine;
    /** The settings, known before the database is reached. */
    private final EngineConfig config;
    /** The registered handlers, known before the database is reached. */
    private final HandlerRegistry handlers;

    private DbTasks(DeferredEngine engine, EngineConfig config, HandlerRegistry handlers) {
        this.engine = engine;
        this.config = config;
        this.handlers = handlers;
    }

    /**
     * Starts configuring an engine on {@code dataSource}.
     *
     * @param dataSource the application's database; PostgreSQL, MySQL/MariaDB or H2
     * @return a builder, not thread-safe
     * @throws NullPointerException if {@code dataSource} is {@code null}
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * Enqueues one task in its own transaction and wakes a local worker of its queue.
     *
     * @param request the task
     * @return the stored task; with an idempotency key that already exists, the existing task and
     *     {@code duplicate = true}
     * @throws InvalidPayloadException if the payload cannot be written as JSON
     * @throws DbTasksException if the database fails
     */
    public EnqueueResult enqueue(TaskRequest request) {
        return engine.enqueuer().enqueue(List.of(request)).get(0);
    }

    /**
     * Enqueues one task on the caller's connection, so it commits or rolls back with the caller's
     * transaction. The connection is neither committed nor closed.
     *
     * @param connection an open connection to the engine's database
     * @param request the task
     * @return the stored task, or the existing one marked duplicate
     * @throws InvalidPayloadException if the payload cannot be written as JSON
     * @throws DbTasksException if the database fails
     */
    public EnqueueResult enqueue(Connection connection, TaskRequest request) {
        return engine.enqueuer().enqueue(connection, List.of(request)).get(0);
    }

    /**
     * Enqueues many tasks in one transaction: all or none.
     *
     * @param requests the tasks
     * @return one result per request, in order
     * @throws InvalidPayloadException if a payload cannot be written as JSON; nothing is stored
     * @throws DbTasksException if the database fails; nothing is stored
     */
    public List<EnqueueResult> enqueueAll(List<TaskRequest> requests) {
        return engine.enqueuer().enqueue(requests);
    }

    /**
     * Enqueues many tasks on the caller's connection and transaction.
     *
     * @param connection an open connection to the engine's database; not committed or closed
     * @param requests the tasks
     * @return one result per request, in order
     * @throws InvalidPayloadException if a payload cannot be written as JSON
     * @throws DbTasksException if the database fails
     */
    public List<EnqueueResult> enqueueAll(Connection connection, List<TaskRequest> requests) {
        return engine.enqueuer().enqueue(connection, requests);
    }

    /**
     * @param id a task id
     * @return the task, or empty if there is none with that id
     * @throws DbTasksException if the database fails
     */
    public Optional<Task> find(long id) {
        return engine.queries().find(id);
    }

    /**
     * @param idempotencyKey a task's idempotency key
     * @return the task, or empty if none has that key
     * @throws DbTasksException if the database fails
     */
    public Optional<Task> findByKey(String idempotencyKey) {
        return engine.queries().findByKey(StoredText.requireText("idempotencyKey", idempotencyKey));
    }

    /**
     * Lists tasks, newest first.
     *
     * @param filter which tasks; {@link TaskFilter#ALL} for every one
     * @param page the zero-based page
     * @param size rows per page, 1 to 1000
     * @return the page with the total count
     * @throws IllegalArgumentException if {@code page} is negative or {@code size} out of range
     * @throws DbTasksException if the database fails
     */
    public Page<Task> list(TaskFilter filter, int page, int size) {
        return engine.queries().list(filter, page, size);
    }

    /**
     * Searches tasks by keyset, newest first: the next page is {@code query.before(slice.next())}.
     * Each page costs the same however deep it is; filters by state, key and reference use their
     * indexes, a creation-time range is narrowed to an id range first. A payload filter runs in SQL
     * on PostgreSQL and MariaDB; on H2 the rows the other filters select are matched in Java, at most
     * 20,000 rows per page ({@link
     * TaskSlice#scanLimited()} then says so).
     *
     * @param query the filters and the cursor; {@link TaskQuery#ALL} for every task
     * @param size rows per page, 1 to 10000
     * @return the page, with the full tasks
     * @throws IllegalArgumentException if {@code size} is out of range
     * @throws DbTasksException if the database fails or the query's timeout passes
     */
    public TaskSlice<Task> search(TaskQuery query, int size) {
        return engine.queries().searches().tasks(Objects.requireNonNull(query, "query"), size);
    }

    /**
     * As {@link #search}, without payloads: what a listing shows.
     *
     * @param query the filters and the cursor
     * @param size rows per page, 1 to 10000
     * @return the page
     * @throws IllegalArgumentException if {@code size} is out of range
     * @throws DbTasksException if the database fails or the query's timeout passes
     */
    public TaskSlice<TaskSummary> searchSummaries(TaskQuery query, int size) {
        return engine.queries().searches().summaries(Objects.requireNonNull(query, "query"), size);
    }

    /**
     * One step of a walk over the ids a query matches, newest first, below its cursor, looking at
     * up to {@code size} rows: for actions on every matching task without reading them.
     *
     * @param query the filters and the cursor
     * @param size rows to look at, 1 to 10000
     * @return the matching ids and the next cursor
     * @throws IllegalArgumentException if {@code size} is out of range
     * @throws DbTasksException if the database fails or the query's timeout passes
     */
    public TaskIds searchIds(TaskQuery query, int size) {
        return engine.queries().searches().ids(Objects.requireNonNull(query, "query"), size);
    }

    /**
     * Counts the tasks a query matches below its cursor: one {@code COUNT(*)} (on H2 with a payload
     * filter, a walk over the rows), so not meant for every page load. A query by queue and a
     * finished state only (or by queue alone), without a cursor, is answered as {@link
     * #stateCounts()} counts, from the hourly counts of finished tasks and the live rows, whatever
     * the size of history.
     *
     * @param query the filters and the cursor
     * @return how many tasks match
     * @throws DbTasksException if the database fails or the query's timeout passes
     */
    public long count(TaskQuery query) {
        return engine.queries().searches().count(Objects.requireNonNull(query, "query"));
    }

    /**
     * Task counts by queue and state, with each queue's earliest PENDING run time. Live states
     * (PENDING, RUNNING, WAITING) are counted from their rows; finished ones from the hourly counts
     * the engine keeps ({@link #countHistory}) plus the rows finished since the newest counted hour,
     * so the cost follows the live tasks and the last hour or so of history, not the size of the
     * history. Every count is exact as of one snapshot: a counted hour stays exact when retention,
     * a retry or a delete removes tasks from it. Until the first hour is counted, the finished rows
     * are counted whole. Meant for a background refresh, not per request.
     *
     * <p>Thread-safe.
     *
     * @return one entry per (queue, state) that has tasks, in no particular order
     * @throws DbTasksException if the database fails
     */
    public List<QueueStateCount> stateCounts() {
        return engine.queries().searches().stateCounts();
    }

    /**
     * @return the highest attempt id, 0 when there are none; the upper bound for {@link
     *     #attemptsPerMinute}
     * @throws DbTasksException if the database fails
     */
    public long maxAttemptId() {
        return engine.queries().searches().maxAttemptId();
    }

    /**
     * Attempts with {@code after < id <= upTo} finished at or after {@code since}, counted per
     * minute: by primary-key range, so a refresh reads only the attempts written since the last one.
     *
     * @param after the id to start above
     * @param upTo the highest id to count
     * @param since the earliest finish time counted
     * @return one entry per minute that has attempts, in no particular order
     * @throws DbTasksException if the database fails
     */
    public List<AttemptsPerMinute> attemptsPerMinute(long after, long upTo, Instant since) {
        return engine.queries().searches().attemptsPerMinute(after, upTo, Objects.requireNonNull(since, "since"));
    }

    /**
     * @return the database's clock now, the clock due times and leases are measured by
     * @throws DbTasksException if the database fails
     */
    public Instant databaseNow() {
        return engine.queries().searches().databaseNow();
    }

    /**
     * The newest rows of a toolkit table, read-only, as column name (lower case) to value; time
     * columns as {@link Instant}.
     *
     * @param table which table; its javadoc names the columns and the order
     * @param limit at most this many rows, 1 to 10000
     * @return the rows, newest first
     * @throws IllegalArgumentException if {@code limit} is out of range
     * @throws DbTasksException if the database fails
     */
    public List<Map<String, Object>> recentRows(ToolTable table, int limit) {
        return engine.queries().searches().recentRows(Objects.requireNonNull(table, "table"), limit);
    }

    /**
     * @param taskId a task id
     * @return its attempts, oldest first; empty if it has none or does not exist
     * @throws DbTasksException if the database fails
     */
    public List<Attempt> attempts(long taskId) {
        return engine.queries().attempts(taskId);
    }

    /**
     * @return task counts by status and attempt counts by outcome, overall and per queue
     * @throws DbTasksException if the database fails
     */
    public TaskStats stats() {
        return engine.queries().stats();
    }

    /**
     * The depth of every queue that has PENDING, RUNNING or FAILED tasks, in one statement served by
     * the claim, rescue and unsuccessful-task indexes (on PostgreSQL), without reading finished
     * history; meant for gauges sampled on an interval. Due-ness and age are by the database clock.
     *
     * @return one entry per queue, by queue name; queues without such tasks are absent
     * @throws DbTasksException if the database fails
     */
    public List<QueueDepth> queueDepths() {
        return engine.queries().queueDepths();
    }

    /**
     * Sends a FAILED or CANCELLED task back to PENDING, due now, with one more attempt allowed.
     *
     * @param id the task
     * @return the task after the change
     * @throws TaskNotFoundException if there is no such task
     * @throws IllegalTransitionException if it is not FAILED or CANCELLED
     */
    public Task retry(long id) {
        return retry(id, 1);
    }

    /**
     * Sends a FAILED or CANCELLED task back to PENDING, due now, allowing {@code additionalAttempts}
     * more attempts than it has made.
     *
     * @param id the task
     * @param additionalAttempts attempts granted, at least 1
     * @return the task after the change
     * @throws IllegalArgumentException if {@code additionalAttempts < 1}
     * @throws TaskNotFoundException if there is no such task
     * @throws IllegalTransitionException if it is not FAILED or CANCELLED
     */
    public Task retry(long id, int additionalAttempts) {
        return engine.operations().retry(id, additionalAttempts);
    }

    /**
     * Cancels a task: a PENDING one at once; a RUNNING one cooperatively (its worker interrupts the
     * handler at the next heartbeat and records CANCELLED).
     *
     * @param id the task
     * @return the task after the change; a RUNNING task shows {@code cancelRequested}
     * @throws TaskNotFoundException if there is no such task
     * @throws IllegalTransitionException if it is already SUCCEEDED, FAILED or CANCELLED
     */
    public Task cancel(long id) {
        return engine.operations().cancel(id);
    }

    /**
     * Moves a PENDING task's due time.
     *
     * @param id the task
     * @param runAt the new due time
     * @return the task after the change
     * @throws TaskNotFoundException if there is no such task
     * @throws IllegalTransitionException if it is not PENDING
     */
    public Task reschedule(long id, Instant runAt) {
        return engine.operations().reschedule(id, Objects.requireNonNull(runAt, "runAt"));
    }

    /**
     * Makes the task with this idempotency key due now: a PENDING one runs at once, a FAILED or
     * CANCELLED one is retried with one more attempt, as {@link #runNow(long)} says.
     *
     * @param idempotencyKey the task's key
     * @return the task after the change
     * @throws TaskNotFoundException if no task has this key
     * @throws IllegalTransitionException if it is WAITING, RUNNING or SUCCEEDED
     */
    public Task runNow(String idempotencyKey) {
        return engine.operations().runNow(StoredText.requireText("idempotencyKey", idempotencyKey));
    }

    /**
     * Makes a task due now, atomically: guarded UPDATEs decide by the state the task has when they
     * run, so a concurrent claim, retry or second call cannot slip between a check and the change.
     * A PENDING task runs at once; a FAILED or CANCELLED one is retried with one more attempt, as
     * {@link #retry(long)} does: a workflow step cancelled because a dependency failed waits for it
     * again (WAITING, not run), and the steps a failed step cancelled wait for it again. A WAITING
     * step is refused: it runs when its dependencies have ended. Safe to call from any thread, and
     * again: a task already made due stays PENDING and due.
     *
     * @param id the task
     * @return the task as read after the change (a worker may have claimed it meanwhile)
     * @throws TaskNotFoundException if there is no such task
     * @throws IllegalTransitionException if it is WAITING, RUNNING or SUCCEEDED
     * @throws DbTasksException if the database fails
     */
    public Task runNow(long id) {
        return engine.operations().runNow(id);
    }

    /**
     * Checks that a task of {@code kind} with this JSON payload could run on this engine.
     *
     * @param kind the kind
     * @param payloadJson the payload as JSON text, or {@code null}
     * @throws UnknownKindException if no handler is registered for {@code kind}
     * @throws InvalidPayloadException if the JSON does not read as the kind's payload type
     */
    public void validate(String kind, @Nullable String payloadJson) {
        handlers.validate(kind, payloadJson);
    }

    /**
     * @return the kinds with a registered handler
     */
    public Set<String> kinds() {
        return handlers.kinds();
    }

    /**
     * The kind registered under {@code name}, with the payload type its handler reads, so that a
     * caller (a REST API, say) can check or convert a payload before enqueueing it.
     *
     * @param name a kind name; may be {@code null}
     * @return the kind, or empty if no handler is registered for it
     */
    public Optional<TaskKind<?>> kind(@Nullable String name) {
        if (name == null) {
            return Optional.empty();
        }
        HandlerRegistry.Registration<?> r = handlers.find(name);
        return r == null ? Optional.empty() : Optional.of(TaskKind.of(r.kind(), r.payloadType()));
    }

    /**
     * Deletes a task that is not RUNNING, with its attempts and its workflow edges. An unfinished
     * workflow step that WAITING steps depend on is not deleted (they would wait for ever): cancel
     * it first, which ends them.
     *
     * @param id the task
     * @return the task as it was just before deletion
     * @throws TaskNotFoundException if there is no such task
     * @throws IllegalTransitionException if it is RUNNING (cancel it first), or unfinished with
     *     WAITING steps depending on it
     * @throws DbTasksException if the database fails
     */
    public Task delete(long id) {
        return engine.operations().delete(id);
    }

    /**
     * Pauses a queue across the cluster: no engine claims its tasks until {@link #resumeQueue}.
     * Enqueues still succeed, and tasks already claimed run to their end. Every engine re-reads the
     * paused queues at most once per poll interval (at most 1 s), so other instances stop claiming
     * within that time; this one at once. The pause is a row in {@code dbtasks_queue_pause} and
     * survives restarts.
     *
     * @param queue the queue name
     * @param pausedBy who paused it, for display; may be {@code null}
     * @return {@code true} if it was running and is now paused, {@code false} if it was paused
     *     already
     * @throws DbTasksException if the database fails
     */
    public boolean pauseQueue(String queue, @Nullable String pausedBy) {
        return engine.queueControl()
                .pause(
                        StoredText.requireName("queue", Objects.requireNonNull(queue, "queue")),
                        StoredText.requireText("pausedBy", pausedBy));
    }

    /**
     * Resumes a paused queue and wakes this engine's workers of it.
     *
     * @param queue the queue name
     * @return {@code true} if it was paused
     * @throws DbTasksException if the database fails
     */
    public boolean resumeQueue(String queue) {
        return engine.queueControl().resume(StoredText.requireName("queue", Objects.requireNonNull(queue, "queue")));
    }

    /**
     * @return the paused queues, read from the database now, sorted by name
     * @throws DbTasksException if the database fails
     */
    public Set<String> pausedQueues() {
        return engine.queueControl().paused();
    }

    /**
     * The engines with workers that recorded themselves in the database: each writes its row at
     * {@link #start()}, touches it every heartbeat interval and deletes it at a clean stop.
     *
     * @return the recorded engines by worker id, including crashed ones whose heartbeat is old
     * @throws DbTasksException if the database fails
     */
    public List<WorkerInfo> workers() {
        return engine.queueControl().workers();
    }

    /**
     * The due tasks of this engine's queues that it does not claim, by queue, kind and job target,
     * as of its last check (every quarter of {@link Builder#unclaimableGrace}, at most 30 s). An
     * engine claims only the kinds it has a handler for and, for job runs, the targets its {@link
     * JobTargetInvoker} allow-lists; other tasks stay PENDING, untouched, for engines that can run
     * them, and each entry says whether a live engine of the queue can ({@link
     * ForeignTasks#runnableElsewhere()}).
     *
     * @return the groups, empty before the first check and on an engine without workers; never
     *     {@code null}. Thread-safe.
     */
    public List<ForeignTasks> foreignTasks() {
        return engine.foreignTasks();
    }

    /**
     * Named lease locks with fencing tokens in this engine's database ({@code dbtasks_lock}); usable
     * before {@link #start()} and on an engine without workers. Renewals of {@code withLock} stop when
     * the engine is stopped.
     *
     * @return the locks, thread-safe; the same instance on every call
     */
    public LeaseLocks locks() {
        return engine.locks();
    }

    /**
     * Concurrency limits per concurrency key ({@code dbtasks_limit}): at most N tasks of a key
     * RUNNING at once across the cluster, or one at a time in enqueue order, rates per key, and
     * queue-wide rates (at most R starts of a whole queue per window), enforced by the claim in the
     * database. Usable before {@link #start()} and on an engine without workers; a change
     * holds on every engine within {@link Limits#REFRESH_MILLIS} ms.
     *
     * @return the limits, thread-safe; the same instance on every call
     */
    public Limits limits() {
        return engine.limits();
    }

    /**
     * Run-once guards in this engine's database ({@code dbtasks_once}): work that succeeds at most
     * once per key across the cluster. Usable before {@link #start()} and on an engine without
     * workers; renewals stop when the engine is stopped.
     *
     * @return the guards, thread-safe; the same instance on every call
     */
    public RunOnceGuards guards() {
        return engine.guards();
    }

    /**
     * The processed-message inbox in this engine's database ({@code dbtasks_inbox}).
     *
     * @return the inbox, thread-safe; the same instance on every call
     */
    public Inbox inbox() {
        return engine.inbox();
    }

    /**
     * Job definitions in this engine's database ({@code dbtasks_job}): table-defined jobs,
     * run by code, by business type, by a list of codes, or again after a failure. Their tasks run
     * on engines built with {@link Builder#jobTargets(JobTargetInvoker)}. Usable before {@link
     * #start()} and on an engine without workers.
     *
     * @return the definitions, thread-safe; the same instance on every call
     */
    public JobDefinitions jobs() {
        return engine.jobs();
    }

    /**
     * Chunked batches in this engine's database ({@code dbtasks_batch}); their chunks run on engines
     * with a {@link Builder#chunkHandler(String, Class, ChunkHandler)} for the batch's kind. Usable
     * before {@link #start()} and on an engine without workers.
     *
     * @return the batches, thread-safe; the same instance on every call
     */
    public Batches batches() {
        return engine.batches();
    }

    /**
     * Workflows in this engine's database: graphs of steps, each a task that runs once the steps it
     * depends on have succeeded, inserted whole in one transaction ({@code dbtasks_workflow}, {@code
     * dbtasks_dependency}). Usable before {@link #start()} and on an engine without workers.
     *
     * @return the workflows, thread-safe; the same instance on every call
     */
    public io.dbtasks.workflow.Workflows workflows() {
        return engine.workflows();
    }

    /**
     * The recurring schedules in this engine's database ({@code dbtasks_schedule}): create, update,
     * pause, resume and delete them at run time, and read their next and last slots and the outcome
     * of their latest task. Usable before {@link #start()} and on an engine without workers; slots
     * are enqueued by started engines (see {@link Builder#scheduling(boolean)}).
     *
     * @return the schedules, thread-safe; the same instance on every call
     */
    public Schedules schedules() {
        return engine.schedules();
    }

    /**
     * Starts claiming and running tasks, heartbeating leases and rescuing expired ones. Idempotent.
     * Also saves the schedules declared with {@link Builder#schedule(Schedule)} (inserted, or updated
     * if their definition changed) and starts enqueueing due schedule slots.
     *
     * @throws IllegalStateException if the engine was closed
     * @throws DbTasksException if a declared schedule cannot be saved
     */
    public void start() {
        engine.start();
    }

    /**
     * Stops gracefully: stops claiming, waits up to the shutdown timeout for running tasks, then
     * interrupts the rest and hands them back to PENDING without using up an attempt.
     *
     * @param timeout how long to wait for running tasks
     * @return {@code true} if every running task finished in time
     */
    public boolean stop(Duration timeout) {
        return engine.stop(timeout);
    }

    /** Stops with the configured shutdown timeout; see {@link #stop(Duration)}. */
    @Override
    public void close() {
        engine.stop(config.shutdownTimeout());
    }

    /**
     * @return {@code true} between {@link #start()} and {@link #stop(Duration)}
     */
    public boolean isRunning() {
        return engine.isRunning();
    }

    /**
     * @return the queues this engine works and the most tasks of each it runs at once; empty for a
     *     producer-only engine; immutable
     */
    public Map<String, Integer> queues() {
        return config.queues();
    }

    /**
     * @return this engine's worker id, written as the lease owner of the tasks it claims
     */
    public String workerId() {
        return config.workerId();
    }

    /**
     * @return the number of tasks this engine is running right now
     */
    public int runningCount() {
        return engine.runningCount();
    }

    /**
     * Events not delivered because a listener's queue was full (a listener slower than the
     * engine), summed over all listeners since {@link Builder#build()}; see {@link
     * io.dbtasks.event}. Thread-safe.
     *
     * @return the number of dropped events, 0 with no listeners
     */
    public long droppedEvents() {
        return engine.droppedEvents();
    }

    /**
     * Transactions of this engine that the database rolled back as a deadlock victim or a
     * serialization failure (SQLState class 40), since {@link Builder#build()}, whether they were
     * then run again or not. Thread-safe.
     *
     * @return the count, 0 if none
     */
    public long deadlocks() {
        return engine.deadlocks();
    }

    /**
     * A snapshot of the engine's database health: the last success, failures in a row, the last
     * failure or stall. Cheap (no database call); thread-safe.
     *
     * @return the snapshot, never {@code null}
     */
    public DbTasksHealth health() {
        return engine.health();
    }

    /**
     * Runs one retention sweep now on the calling thread, with the ages set on the builder (the
     * sweep interval does not matter), without taking the cluster-wide retention lock. For tests,
     * operators and engines without workers; started engines sweep on their own.
     *
     * @return rows deleted: finished tasks (their attempts not counted), guards and inbox records
     * @throws DbTasksException if the database fails; batches deleted before it stay deleted
     */
    public long sweepRetention() {
        return engine.sweepRetention();
    }

    /**
     * Counts finished tasks per hour now, on the calling thread, without taking the cluster-wide
     * lock ({@code dbtasks.history-counts}) that started engines take for the same work every few
     * minutes. Closed hours (ended at least five minutes ago by the database clock) not yet counted
     * are counted oldest first, each in its own short transaction, up to {@code maxHours} of them;
     * hours without a finished task cost nothing. {@link #stateCounts()} then reads the counts of
     * these hours instead of their rows. For tests, operators and engines without workers.
     *
     * <p>Thread-safe; concurrent calls count each hour once.
     *
     * @param maxHours the most hours to count in this call, at least 1
     * @return how many hours were counted; fewer than {@code maxHours} once every closed hour is
     * @throws IllegalArgumentException if {@code maxHours} is below 1
     * @throws DbTasksException if the database fails; hours counted before it stay counted
     */
    public int countHistory(int maxHours) {
        return engine.countHistory(maxHours);
    }

    /**
     * @return the detected database dialect: {@code postgresql}, {@code mariadb} or {@code h2}; {@code
     *     unknown} while an engine built during an outage has not reached its database yet
     */
    public String dialect() {
        return engine.dialectName();
    }

    /**
     * Configures a {@link DbTasks}. Not thread-safe; the built engine copies everything, so the
     * builder may be discarded or reused.
     */
    public static final class Builder {
        private final DataSource dataSource;
        private final HandlerRegistry.Builder handlers = HandlerRegistry.builder();
        private final Map<String, Integer> queues = new LinkedHashMap<>();
        private final List<Class<? extends Throwable>> nonRetryable = new ArrayList<>();
        private ExecutorService executor;
        private String workerId;
        private Duration lease = DEFAULT_LEASE;
        private Duration heartbeatInterval;
        private Duration pollInterval = DEFAULT_POLL_INTERVAL;
        private Duration enqueueSignalInterval = DEFAULT_ENQUEUE_SIGNAL_INTERVAL;
        private Duration rescueInterval = DEFAULT_RESCUE_INTERVAL;
        private Duration vacuumInterval = DEFAULT_VACUUM_INTERVAL;
        private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
        private Duration statementTimeout = DEFAULT_STATEMENT_TIMEOUT;
        private int claimBatch = DEFAULT_CLAIM_BATCH;
        private boolean claimAhead = true;
        private int defaultMaxAttempts = DEFAULT_MAX_ATTEMPTS;
        private RetryPolicy defaultRetryPolicy = RetryPolicy.DEFAULT;
        private Duration defaultTimeout;
        private JsonMapper jsonMapper;
        private boolean migrate = true;
        private Boolean transactionPooling;
        private boolean workers = true;
        private DoubleSupplier random = () -> ThreadLocalRandom.current().nextDouble();
        private final List<TaskEventListener> listeners = new ArrayList<>();
        private Duration longRunningThreshold = Duration.ZERO;
        private JobTargetInvoker jobTargets;
        private final List<ChunkRegistration<?>> chunkHandlers = new ArrayList<>();

        private record ChunkRegistration<P>(String kind, Class<P> paramsType, ChunkHandler<P> handler) {}

        private Duration retentionInterval = DEFAULT_RETENTION_INTERVAL;
        private Duration unclaimableGrace = DEFAULT_UNCLAIMABLE_GRACE;
        private final Map<TaskStatus, Duration> taskRetention = new java.util.EnumMap<>(Map.of(
                TaskStatus.SUCCEEDED, DEFAULT_SUCCEEDED_RETENTION,
                TaskStatus.FAILED, DEFAULT_FAILED_RETENTION,
                TaskStatus.CANCELLED, DEFAULT_FAILED_RETENTION));
        private final Map<String, Map<TaskStatus, Duration>> queueRetention = new java.util.LinkedHashMap<>();
        private Duration guardRetention = Duration.ZERO;
        private final Map<String, Duration> longRunningByKind = new LinkedHashMap<>();
        private final Map<String, Duration> longRunningByQueue = new LinkedHashMap<>();
        private Duration inboxRetention = Duration.ZERO;
        private final Map<String, Schedule> schedules = new LinkedHashMap<>();
        private boolean scheduling = true;
        private Duration schedulePollInterval = DEFAULT_SCHEDULE_POLL_INTERVAL;
        private int scheduleBatch = DEFAULT_SCHEDULE_BATCH;
        private Clock scheduleClock;
        private final Map<String, io.dbtasks.once.RunOnceTarget> runOnceTargets = new LinkedHashMap<>();

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * Registers the handler for {@code kind}.
         *
         * @param kind the stable kind name
         * @param payloadType the class the JSON payload is read as; {@code Void.class} for none
         * @param handler the handler, thread-safe
         * @param <P> the payload type
         * @return this
         * @throws IllegalArgumentException if {@code kind} already has a handler
         */
        public <P> Builder handler(String kind, Class<P> payloadType, TaskHandler<P> handler) {
            handlers.register(kind, payloadType, handler);
            return this;
        }

        /**
         * Registers the handler for a typed kind; the same as {@code handler(kind.name(),
         * kind.payloadType(), handler)}.
         *
         * @param kind the kind and its payload type
         * @param handler the handler, thread-safe
         * @param <P> the payload type
         * @return this
         * @throws IllegalArgumentException if the kind already has a handler
         */
        public <P> Builder handler(TaskKind<P> kind, TaskHandler<P> handler) {
            return handler(kind.name(), kind.payloadType(), handler);
        }

        /**
         * Registers a transactional handler for a typed kind; see {@link
         * #transactionalHandler(String, Class, TransactionalTaskHandler)}.
         *
         * @param kind the kind and its payload type
         * @param handler the handler, thread-safe
         * @param <P> the payload type
         * @return this
         * @throws IllegalArgumentException if the kind already has a handler
         */
        public <P> Builder transactionalHandler(TaskKind<P> kind, TransactionalTaskHandler<P> handler) {
            return transactionalHandler(kind.name(), kind.payloadType(), handler);
        }

        /**
         * Registers a transactional handler for {@code kind}: its effects, written through the
         * engine's connection, commit in one transaction with the task's guarded completion, so they
         * take effect exactly once even if the lease is lost mid-run. See {@link
         * TransactionalTaskHandler}.
         *
         * @param kind the stable kind name
         * @param payloadType the class the JSON payload is read as; {@code Void.class} for none
         * @param handler the handler, thread-safe
         * @param <P> the payload type
         * @return this
         * @throws IllegalArgumentException if {@code kind} already has a handler
         */
        public <P> Builder transactionalHandler(
                String kind, Class<P> payloadType, TransactionalTaskHandler<P> handler) {
            handlers.registerTransactional(kind, payloadType, handler);
            return this;
        }

        /**
         * Runs job definitions' tasks (kind {@value JobDefinitions#KIND}) through {@code invoker},
         * which calls only the methods the application allow-listed; see {@link
         * io.dbtasks.job.JobMethodRegistry} for a plain-Java one. Without it this engine does not take
         * job tasks (their kind is unknown to it).
         *
         * @param invoker the invoker, thread-safe
         * @return this
         * @throws NullPointerException if {@code invoker} is {@code null}
         */
        public Builder jobTargets(JobTargetInvoker invoker) {
            this.jobTargets = Objects.requireNonNull(invoker, "invoker");
            return this;
        }

        /**
         * How long due tasks that no live engine of their queue can run wait before this engine fails
         * them. An engine claims only tasks it can run (a kind it has a handler for; for job runs, a
         * target its invoker allow-lists) and leaves the rest, untouched, to other engines. A task
         * that no live engine working its queue can run, by what the engines advertise in their
         * worker rows ({@link WorkerInfo#kinds()}), ends FAILED with the reason once that has held
         * for this long without a break; an engine of an older version, which advertises nothing,
         * counts as able to run anything. The grace lets a rolling deploy that brings a new kind to
         * some engines first lose nothing.
         *
         * @param grace the grace period, default 10 minutes; {@link Duration#ZERO} never fails them
         * @return this
         * @throws IllegalArgumentException if {@code grace} is negative
         */
        public Builder unclaimableGrace(Duration grace) {
            Objects.requireNonNull(grace, "grace");
            if (grace.isNegative()) {
                throw new IllegalArgumentException("unclaimableGrace must not be negative, got " + grace);
            }
            this.unclaimableGrace = grace;
            return this;
        }

        /**
         * Registers the handler of a batch kind: its chunks are tasks of kind {@code
         * dbtasks.batch:<kind>}, each run in one transaction with its done record; see {@link
         * io.dbtasks.batch.Batches}.
         *
         * @param kind the batch kind, 1 to 180 characters
         * @param paramsType the class the batch parameters are read as; {@code Void.class} for none
         * @param handler the handler, thread-safe
         * @param <P> the parameters' type
         * @return this
         * @throws IllegalArgumentException if the kind is blank, too long or registered already
         */
        public <P> Builder chunkHandler(String kind, Class<P> paramsType, ChunkHandler<P> handler) {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(paramsType, "paramsType");
            Objects.requireNonNull(handler, "handler");
            if (kind.isBlank() || kind.length() > 180) {
                throw new IllegalArgumentException("batch kind must be 1 to 180 characters, not blank: '" + kind + "'");
            }
            if (chunkHandlers.stream().anyMatch(r -> r.kind().equals(kind))) {
                throw new IllegalArgumentException(
                        "Batch kind '" + kind + "' already has a handler; each kind takes one");
            }
            chunkHandlers.add(new ChunkRegistration<>(kind, paramsType, handler));
            return this;
        }

        /**
         * Works {@code queue} with up to {@code concurrency} tasks at once. Without any call, the
         * engine works {@value DbTasks#DEFAULT_QUEUE} with {@value DbTasks#DEFAULT_CONCURRENCY}.
         *
         * @param queue the queue name, 1 to {@value TaskRequest#MAX_NAME_LENGTH} characters, not blank
         * @param concurrency the most tasks of this queue running at once on this engine, at least 1
         * @return this
         * @throws IllegalArgumentException if the name or the concurrency is out of range
         */
        public Builder queue(String queue, int concurrency) {
            requireName(queue, "queue");
            if (concurrency < 1) {
                throw new IllegalArgumentException("concurrency of queue " + queue + " must be at least 1");
            }
            queues.put(queue, concurrency);
            return this;
        }

        /**
         * Runs handlers on {@code executor} instead of an engine-owned thread pool; for example
         * {@code Executors.newVirtualThreadPerTaskExecutor()} on Java 21+. The engine does not shut
         * it down.
         *
         * @param executor the executor
         * @return this
         */
        public Builder executor(ExecutorService executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * @param workerId the lease owner name of this engine, 1 to {@value TaskRequest#MAX_NAME_LENGTH}
         *     characters, not blank (checked by {@link #build()}); default host:pid:random
         * @return this
         */
        public Builder workerId(String workerId) {
            this.workerId = Objects.requireNonNull(workerId, "workerId");
            return this;
        }

        /**
         * @param lease how long a claim lasts without a heartbeat; default 30 s
         * @return this
         */
        public Builder lease(Duration lease) {
            this.lease = Objects.requireNonNull(lease, "lease");
            return this;
        }

        /**
         * @param interval how often leases are renewed; default a third of the lease
         * @return this
         */
        public Builder heartbeatInterval(Duration interval) {
            this.heartbeatInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * @param interval how often idle workers poll; default 500 ms
         * @return this
         */
        public Builder pollInterval(Duration interval) {
            this.pollInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * How often, at most, enqueues wake other instances' workers on one queue (PostgreSQL's
         * {@code NOTIFY}; elsewhere they poll and this has no effect). An enqueue into a queue not
         * signalled within the interval signals in its own transaction, so an idle queue's tasks
         * start at once; later enqueues share one signal sent after their commits, at most {@code
         * interval} after the previous one. Under load this keeps enqueues from committing one at a
         * time behind PostgreSQL's notification lock. This engine's own workers are woken directly,
         * without waiting.
         *
         * @param interval the least time between two signals of one queue from this engine, in
         *     milliseconds' precision; default 5 ms; {@link Duration#ZERO} signals in every enqueue
         * @return this
         * @throws NullPointerException if {@code interval} is {@code null}
         */
        public Builder enqueueSignalInterval(Duration interval) {
            this.enqueueSignalInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * @param interval how often expired leases are rescued; default 10 s
         * @return this
         */
        public Builder rescueInterval(Duration interval) {
            this.rescueInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * How often, on PostgreSQL, a working engine vacuums the task table when it holds more than
         * 10,000 dead rows. Every claim and completion leaves a dead row version and a dead entry at
         * the head of the claim index that later claims step over; where autovacuum is off or slow
         * to reach a busy queue table, claims slow down steadily. One engine of the cluster at a time
         * vacuums (a lease lock, {@code dbtasks.vacuum}); it needs to own the table, else PostgreSQL
         * skips it with a warning. Besides, every 500 ms it compares the table's size with the size
         * its planner statistics were taken at, and runs {@code ANALYZE} once the table has more than
         * doubled, so statements planned while it was nearly empty do not keep sequential-scan plans
         * while a backlog builds. Ignored on other databases.
         *
         * @param interval the vacuum check interval, default 15 s; {@link Duration#ZERO} turns off both
         *     the vacuum and the statistics check
         * @return this
         */
        public Builder vacuumInterval(Duration interval) {
            this.vacuumInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * The longest any statement or commit the engine issues may take before it fails: the
         * connection's network timeout ({@link java.sql.Connection#setNetworkTimeout}) is set to it
         * while the engine uses the connection and restored before it goes back to the pool. A
         * statement or commit that stalls longer (a lock held by a stuck transaction, a synchronous
         * standby gone with synchronous commit on, a network partition) becomes an error, a warning
         * in the log and a failure in {@link DbTasks#health()}. The driver closes a connection whose
         * network timeout expires, which is right for a hung commit: its outcome is unknown and the
         * lease protocol decides it. Not applied on embedded H2 (no network; its {@code
         * LOCK_TIMEOUT} bounds lock waits). A handler's own statements on the connection of a
         * transactional handler are bound by it too.
         *
         * @param timeout the limit, default 30 s; {@link Duration#ZERO} turns it off; whole
         *     milliseconds
         * @return this
         */
        public Builder statementTimeout(Duration timeout) {
            this.statementTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * @param timeout how long {@link DbTasks#close()} waits; default 30 s
         * @return this
         */
        public Builder shutdownTimeout(Duration timeout) {
            this.shutdownTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * The most tasks one claim statement takes. A worker claims only what it has room for (free
         * slots, plus tasks claimed ahead while its tasks are short: see {@link #claimAhead}), so a
         * bigger batch does not take work from other instances; it only lets a busy worker take more
         * per round trip.
         *
         * @param size the most tasks one claim takes, 1 to 1000; default {@value DbTasks#DEFAULT_CLAIM_BATCH}
         * @return this
         */
        public Builder claimBatch(int size) {
            this.claimBatch = size;
            return this;
        }

        /**
         * Whether a queue whose tasks are short claims a few beyond its free handler slots, so its
         * handlers do not idle through a claim round trip (on by default). A task claimed ahead is
         * leased and heartbeated while it waits, at most about 10 ms of work per slot and never more
         * than four per slot or one claim batch, whichever is more; one that waits over a second is
         * handed back unstarted. Turn it off when
         * a newly enqueued task of higher priority must never wait behind tasks already claimed, at
         * the cost of throughput on short tasks.
         *
         * @param enabled {@code false} to claim only for free slots
         * @return this
         */
        public Builder claimAhead(boolean enabled) {
            this.claimAhead = enabled;
            return this;
        }

        /**
         * @param maxAttempts attempts for tasks that do not say, at least 1; default 3
         * @return this
         */
        public Builder defaultMaxAttempts(int maxAttempts) {
            this.defaultMaxAttempts = maxAttempts;
            return this;
        }

        /**
         * @param policy backoff for tasks that do not say
         * @return this
         */
        public Builder defaultRetryPolicy(RetryPolicy policy) {
            this.defaultRetryPolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * @param timeout per-attempt timeout for tasks that do not say; default none
         * @return this
         */
        public Builder defaultTimeout(Duration timeout) {
            this.defaultTimeout = timeout;
            return this;
        }

        /**
         * Fails tasks at once, without retry, when their handler throws {@code type} or a subclass.
         * {@link NonRetryableException} and every {@link Error} are always non-retryable.
         *
         * @param type the exception type
         * @return this
         */
        public Builder nonRetryable(Class<? extends Throwable> type) {
            nonRetryable.add(Objects.requireNonNull(type, "type"));
            return this;
        }

        /**
         * @param mapper the Jackson mapper for payloads; default one without default typing
         * @return this
         */
        public Builder jsonMapper(JsonMapper mapper) {
            this.jsonMapper = Objects.requireNonNull(mapper, "mapper");
            return this;
        }

        /**
         * @param migrate whether {@link #build()} runs the Flyway migrations; default true
         * @return this
         */
        public Builder migrate(boolean migrate) {
            this.migrate = migrate;
            return this;
        }

        /**
         * Says whether a connection pooler in transaction mode (PgBouncer's {@code pool_mode =
         * transaction}, or alike) sits between the engine and PostgreSQL. Behind one, the engine's
         * connections send unnamed statements only ({@code prepareThreshold=0}: a named server-side
         * statement may reach a backend where another client prepared a different statement under
         * the same name) and cross-instance wake-up is by polling (the pooler does not deliver
         * notifications). Default {@code null}: detect it at {@link #build()} (a server reached on
         * another port than the URL names, or over a Unix socket, counts as a pooler), and check
         * LISTEN with a test notification at {@link DbTasks#start()}. Ignored on other databases.
         *
         * @param transactionPooling {@code true} behind a transaction pooler, {@code false} for a
         *     direct connection (or session pooling), {@code null} to detect
         * @return this
         */
        public Builder transactionPooling(@Nullable Boolean transactionPooling) {
            this.transactionPooling = transactionPooling;
            return this;
        }

        /**
         * @param workers {@code false} for a producer-only engine that enqueues, queries and operates
         *     but never claims; default true
         * @return this
         */
        public Builder workers(boolean workers) {
            this.workers = workers;
            return this;
        }

        /**
         * Adds a listener for the engine's task and worker events. Each listener gets its own
         * bounded queue and delivery thread, so it never delays claims, task outcomes or other
         * listeners; see {@link io.dbtasks.event} for delivery and ordering.
         *
         * @param listener the listener; called on its own thread, one event at a time
         * @return this
         * @throws NullPointerException if {@code listener} is {@code null}
         */
        public Builder listener(TaskEventListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * Publishes a {@link io.dbtasks.event.TaskEvent.Type#LONG_RUNNING} event and logs a warning, once per attempt,
         * for a handler that runs longer than {@code threshold}. Checked on a timer every half
         * threshold (at most every half heartbeat interval, at least every 10 ms), so the event may
         * come that much later. Default {@link Duration#ZERO}: never.
         *
         * @param threshold how long a handler may run before the event; zero for never
         * @return this
         * @throws IllegalArgumentException if {@code threshold} is negative
         */
        public Builder longRunningThreshold(Duration threshold) {
            Objects.requireNonNull(threshold, "threshold");
            if (threshold.isNegative()) {
                throw new IllegalArgumentException("longRunningThreshold must not be negative, got " + threshold);
            }
            this.longRunningThreshold = threshold;
            return this;
        }

        /**
         * The long-running threshold of tasks of {@code kind}, which wins over their queue's ({@link
         * #longRunningThresholdForQueue}) and the engine's ({@link #longRunningThreshold}). A task
         * past it publishes {@link io.dbtasks.event.TaskEvent.Type#LONG_RUNNING} and logs a warning,
         * once per attempt.
         *
         * @param kind the kind
         * @param threshold how long its handler may run; zero for never
         * @return this
         * @throws IllegalArgumentException if {@code threshold} is negative
         */
        public Builder longRunningThresholdForKind(String kind, Duration threshold) {
            longRunningByKind.put(Objects.requireNonNull(kind, "kind"), nonNegative(threshold, "threshold"));
            return this;
        }

        /**
         * The long-running threshold of tasks in {@code queue}, which wins over the engine's ({@link
         * #longRunningThreshold}) and loses to a kind's ({@link #longRunningThresholdForKind}).
         *
         * @param queue the queue
         * @param threshold how long a handler may run; zero for never
         * @return this
         * @throws IllegalArgumentException if {@code threshold} is negative
         */
        public Builder longRunningThresholdForQueue(String queue, Duration threshold) {
            longRunningByQueue.put(Objects.requireNonNull(queue, "queue"), nonNegative(threshold, "threshold"));
            return this;
        }

        /**
         * How often a started engine with workers deletes old rows: finished tasks with their
         * attempts ({@link #retention(TaskStatus, Duration)}), run-once guards ({@link
         * #guardRetention}) and inbox records ({@link #inboxRetention}). One engine of the cluster at a
         * time sweeps (lease lock {@code dbtasks.retention}); tasks go in batches of 1,000 rows per
         * statement, each its own short transaction, found on the index of finished tasks by status
         * and finish time, aged by the database clock. The first sweep runs one interval after
         * {@link DbTasks#start()}.
         *
         * @param interval the sweep interval, default 15 minutes; {@link Duration#ZERO} turns
         *     retention off
         * @return this
         * @throws IllegalArgumentException if {@code interval} is negative
         */
        public Builder retentionInterval(Duration interval) {
            Objects.requireNonNull(interval, "interval");
            if (interval.isNegative()) {
                throw new IllegalArgumentException("retentionInterval must not be negative, got " + interval);
            }
            this.retentionInterval = interval;
            return this;
        }

        /**
         * Declares a recurring schedule in code. At {@link DbTasks#start()} its row is inserted, or
         * updated if the stored definition differs (a new cron applies from its next slot); a row
         * with the same definition is left as it is, so slots missed while no engine ran are handled
         * by its {@link io.dbtasks.schedule.MissedSlots} policy. A schedule paused at run time stays
         * paused. Every engine of the cluster may declare the same schedules: each slot still becomes
         * one task.
         *
         * @param schedule the schedule
         * @return this
         * @throws IllegalArgumentException if a schedule of the same name was declared already
         * @throws NullPointerException if {@code schedule} is {@code null}
         */
        public Builder schedule(Schedule schedule) {
            Objects.requireNonNull(schedule, "schedule");
            if (schedules.putIfAbsent(schedule.name(), schedule) != null) {
                throw new IllegalArgumentException("Schedule '" + schedule.name() + "' is declared twice");
            }
            return this;
        }

        /**
         * How long tasks that finished in {@code status} are kept, counted from their finish time.
         * Defaults: SUCCEEDED 7 days, FAILED and CANCELLED 30 days. A queue may keep a state for a
         * different age ({@link #retention(String, TaskStatus, Duration)}); this age applies to the
         * queues that do not.
         *
         * @param status SUCCEEDED, FAILED or CANCELLED
         * @param age the age past which they are deleted; {@link Duration#ZERO} keeps them forever
         * @return this
         * @throws IllegalArgumentException if {@code status} is not a finished status or {@code age}
         *     is negative
         */
        public Builder retention(TaskStatus status, Duration age) {
            requireRetention(status, age);
            taskRetention.put(status, age);
            return this;
        }

        /** The checks of both {@code retention} setters: a finished state and an age not negative. */
        private static void requireRetention(TaskStatus status, Duration age) {
            Objects.requireNonNull(status, "status");
            Objects.requireNonNull(age, "age");
            if (!status.isFinal()) {
                throw new IllegalArgumentException("retention applies to finished tasks only, not " + status);
            }
            if (age.isNegative()) {
                throw new IllegalArgumentException("retention age must not be negative, got " + age);
            }
        }

        /**
         * How long tasks of {@code queue} that finished in {@code status} are kept, counted from their
         * finish time; overrides {@link #retention(TaskStatus, Duration)} for that queue and state
         * only (the queue's other finished states keep the engine-wide age). Setting the same queue
         * and state again replaces the earlier age.
         *
         * <p>Where history is partitioned by day (PostgreSQL, MariaDB), a day is dropped whole only
         * once it is older than the longest age of any finished state in any queue, overrides
         * included, and an age of {@link Duration#ZERO} anywhere keeps every day. A queue kept longer
         * than the defaults therefore keeps the days it has rows in, and the other queues' rows in those
         * days are deleted row by row in batches instead of by dropping the day: more database work per
         * sweep, and their space is returned only when the day is dropped.
         *
         * @param queue the queue, as tasks name it; not blank
         * @param status SUCCEEDED, FAILED or CANCELLED
         * @param age the age past which that queue's tasks in {@code status} are deleted; {@link
         *     Duration#ZERO} keeps them forever
         * @return this
         * @throws NullPointerException if an argument is {@code null}
         * @throws IllegalArgumentException if {@code queue} is blank or not a valid queue name, {@code
         *     status} is not a finished status or {@code age} is negative
         */
        public Builder retention(String queue, TaskStatus status, Duration age) {
            requireName(queue, "queue");
            requireRetention(status, age);
            queueRetention
                    .computeIfAbsent(queue, q -> new java.util.EnumMap<>(TaskStatus.class))
                    .put(status, age);
            return this;
        }

        /**
         * Whether a started engine enqueues due schedule slots (default {@code true}). Turned off, the
         * engine still saves its declared schedules and serves {@link DbTasks#schedules()}, and
         * {@link Schedules#enqueueDue()} polls on demand; other engines enqueue the slots.
         *
         * @param enabled {@code false} to leave slot enqueueing to other engines
         * @return this
         */
        public Builder scheduling(boolean enabled) {
            this.scheduling = enabled;
            return this;
        }

        /**
         * How long run-once guard rows are kept after their last change ({@link
         * RunOnceGuards#deleteOlderThan}). A key whose row is deleted may run again, so keep rows
         * longer than the window in which a key can recur. Default {@link Duration#ZERO}: kept.
         *
         * @param age the age; zero keeps them
         * @return this
         * @throws IllegalArgumentException if {@code age} is negative
         */
        public Builder guardRetention(Duration age) {
            this.guardRetention = nonNegative(age, "guardRetention");
            return this;
        }

        /**
         * The longest a started engine waits between two looks for due schedule slots (default
         * {@link DbTasks#DEFAULT_SCHEDULE_POLL_INTERVAL}). It sleeps until the earliest next slot it
         * knows of and is woken by local changes, so the interval bounds how late it notices a
         * schedule created or changed on another engine. A look when nothing is due is one indexed
         * statement.
         *
         * @param interval positive, whole milliseconds
         * @return this
         */
        public Builder schedulePollInterval(Duration interval) {
            this.schedulePollInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * How long inbox records are kept ({@link Inbox#deleteOlderThan}); a message redelivered after
         * its record is deleted is processed again. Default {@link Duration#ZERO}: kept.
         *
         * @param age the age; zero keeps them
         * @return this
         * @throws IllegalArgumentException if {@code age} is negative
         */
        public Builder inboxRetention(Duration age) {
            this.inboxRetention = nonNegative(age, "inboxRetention");
            return this;
        }

        private static Duration nonNegative(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isNegative()) {
                throw new IllegalArgumentException(what + " must not be negative, got " + d);
            }
            return d;
        }

        /**
         * @param size the most schedules one poll transaction locks, enqueues and advances, 1 to
         *     1000; default {@value DbTasks#DEFAULT_SCHEDULE_BATCH}
         * @return this
         */
        public Builder scheduleBatch(int size) {
            this.scheduleBatch = size;
            return this;
        }

        /**
         * Takes "now" for schedules from {@code clock} instead of the database: which slots are due,
         * missed or next. For tests that drive slots deterministically (daylight-saving days,
         * downtime) with {@link Schedules#enqueueDue()}; production leaves it unset, and the database
         * clock is the truth for every engine. Slot tasks are still due at their slot by the
         * database clock.
         *
         * @param clock the clock, or {@code null} for the database clock (the default)
         * @return this
         */
        public Builder scheduleClock(@Nullable Clock clock) {
            this.scheduleClock = clock;
            return this;
        }

        /**
         * Registers work that this engine runs again under a run-once key whose runner died: a key
         * claimed by {@link io.dbtasks.once.RunOnceGuards#runOnce(String, String, Duration,
         * io.dbtasks.lock.LeasedWork)} with this target's name and left RUNNING past its lease is taken
         * over by one engine that registers the name, every rescue interval, and {@code work} runs
         * under the same key. The Spring starter registers each {@code @RunOnce} method this way.
         *
         * @param name the target's name, 1 to {@value io.dbtasks.once.RunOnceTarget#MAX_NAME}
         *     characters, unique per engine
         * @param lease the lease of a rescued run, renewed every third of it; positive
         * @param work runs the key again; its lease's {@code name()} is the key
         * @return this
         * @throws IllegalArgumentException if the name is invalid or already registered, or the lease
         *     not positive
         */
        public Builder runOnceTarget(String name, Duration lease, io.dbtasks.lock.LeasedWork work) {
            io.dbtasks.once.RunOnceTarget target = new io.dbtasks.once.RunOnceTarget(name, lease, work);
            if (runOnceTargets.putIfAbsent(name, target) != null) {
                throw new IllegalArgumentException(
                        "run-once target '" + name + "' is already registered; give each target its own name");
            }
            return this;
        }

        /**
         * @param random uniform numbers in [0, 1) for backoff jitter; for deterministic tests
         * @return this
         */
        public Builder random(DoubleSupplier random) {
            this.random = Objects.requireNonNull(random, "random");
            return this;
        }

        /**
         * Validates the configuration, detects the dialect, migrates the schema and builds the engine.
         * Workers start with {@link DbTasks#start()}.
         *
         * <p>If the database cannot be reached (a connection refused or timed out), the build still
         * succeeds: calls that need the database try to reach it and, while it is away, throw a {@link
         * DbTasksException} saying so (after at most the DataSource's connection timeout); {@link
         * DbTasks#start()} returns at once and a background thread tries every 250 ms, migrates the
         * schema when the database accepts connections and then starts the workers; {@link
         * DbTasks#health()} is DOWN meanwhile.
         *
         * @return the engine
         * @throws IllegalArgumentException if a setting is out of range
         * @throws DbTasksException if the database answered but is not supported, or the migration
         *     fails
         */
        public DbTasks build() {
            Duration heartbeat = heartbeatInterval != null ? heartbeatInterval : lease.dividedBy(3);
            requirePositive(lease, "lease");
            requirePositive(heartbeat, "heartbeatInterval");
            requirePositive(pollInterval, "pollInterval");
            if (enqueueSignalInterval.isNegative()) {
                throw new IllegalArgumentException(
                        "enqueueSignalInterval must not be negative, got " + enqueueSignalInterval);
            }
            requirePositive(rescueInterval, "rescueInterval");
            if (vacuumInterval.isNegative()) {
                throw new IllegalArgumentException("vacuumInterval must not be negative, got " + vacuumInterval);
            }
            if (heartbeat.compareTo(lease) >= 0) {
                throw new IllegalArgumentException(
                        "heartbeatInterval (" + heartbeat + ") must be shorter than the lease (" + lease + ")");
            }
            if (claimBatch < 1 || claimBatch > 1000) {
                throw new IllegalArgumentException("claimBatch must be 1 to 1000, got " + claimBatch);
            }
            if (defaultMaxAttempts < 1) {
                throw new IllegalArgumentException("defaultMaxAttempts must be at least 1");
            }
            if (statementTimeout.isNegative()) {
                throw new IllegalArgumentException("statementTimeout must not be negative, got " + statementTimeout);
            }
            if (shutdownTimeout.isNegative()) {
                throw new IllegalArgumentException("shutdownTimeout must not be negative");
            }
            if (schedulePollInterval.toMillis() < 1) {
                throw new IllegalArgumentException(
                        "schedulePollInterval must be at least 1 ms, got " + schedulePollInterval);
            }
            if (scheduleBatch < 1 || scheduleBatch > 1000) {
                throw new IllegalArgumentException("scheduleBatch must be 1 to 1000, got " + scheduleBatch);
            }
            if (workerId != null) {
                requireName(workerId, "workerId"); // it is written to a column of that size by every claim
            }
            Map<String, Integer> workedQueues = new LinkedHashMap<>(queues);
            if (workedQueues.isEmpty()) {
                workedQueues.put(DEFAULT_QUEUE, DEFAULT_CONCURRENCY);
            }
            EngineConfig config = new EngineConfig(
                    workerId != null ? workerId : EngineConfig.defaultWorkerId(),
                    workers ? Map.copyOf(workedQueues) : Map.of(),
                    executor,
                    lease,
                    heartbeat,
                    pollInterval,
                    rescueInterval,
                    shutdownTimeout,
                    claimBatch,
                    claimAhead,
                    defaultMaxAttempts,
                    defaultRetryPolicy,
                    defaultTimeout,
                    List.copyOf(nonRetryable),
                    random,
                    vacuumInterval,
                    statementTimeout,
                    List.copyOf(listeners),
                    longRunningThreshold,
                    enqueueSignalInterval);
            JsonMapper mapper =
                    jsonMapper != null ? jsonMapper : JsonMapper.builder().build();
            HandlerRegistry.Builder all = handlers.copy();
            for (ChunkRegistration<?> r : chunkHandlers) {
                registerChunks(all, r, mapper);
            }
            JobTargetInvoker targets = jobTargets;
            // The registry of a wired engine runs schedule slots with that engine's job definitions;
            // the one known before the database is reached only answers for kinds and payloads.
            Function<JobCronHandler.SlotRunner, HandlerRegistry> registries = slots -> {
                HandlerRegistry.Builder withJobs = all.copy();
                if (targets != null) {
                    withJobs.register(JobDefinitions.KIND, JobTaskPayload.class, new JobTaskHandler(targets));
                    withJobs.registerTransactional(
                            JobDefinitions.CRON_KIND, JobCronPayload.class, new JobCronHandler(slots));
                }
                return withJobs.build(mapper);
            };
            HandlerRegistry registry = registries.apply((transaction, code) -> {
                throw new IllegalStateException("Job definitions run on an engine that reached its database");
            });
            EngineSettings settings = new EngineSettings(
                    config,
                    new ScheduleConfig(
                            List.copyOf(schedules.values()),
                            scheduling,
                            schedulePollInterval,
                            scheduleBatch,
                            scheduleClock),
                    migrate,
                    transactionPooling,
                    retentionInterval,
                    taskRetention,
                    queueRetention,
                    guardRetention,
                    inboxRetention,
                    longRunningByKind,
                    longRunningByQueue,
                    unclaimableGrace,
                    runOnceTargets,
                    targets != null ? targets::allowListedTargets : Optional::empty);
            DeferredEngine engine =
                    DeferredEngine.create(() -> Engine.create(dataSource, settings, registries, mapper), config);
            return new DbTasks(engine, config, registry);
        }

        private static <P> void registerChunks(HandlerRegistry.Builder all, ChunkRegistration<P> r, JsonMapper mapper) {
            all.registerTransactional(
                    Batches.KIND_PREFIX + r.kind(),
                    ChunkPayload.class,
                    new ChunkTaskHandler<>(r.kind(), r.paramsType(), r.handler(), mapper));
        }

        private static void requireName(String value, String what) {
            Objects.requireNonNull(value, what);
            StoredText.requireName(what, value);
            if (value.isBlank() || value.length() > TaskRequest.MAX_NAME_LENGTH) {
                throw new IllegalArgumentException(what + " must be 1 to " + TaskRequest.MAX_NAME_LENGTH
                        + " characters and not blank, got " + value.length() + " characters");
            }
        }

        private static void requirePositive(Duration d, String name) {
            if (d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException(name + " must be positive, got " + d);
            }
        }
    }
}
