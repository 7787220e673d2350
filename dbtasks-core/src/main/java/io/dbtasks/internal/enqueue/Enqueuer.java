package io.dbtasks.internal.enqueue;

import io.dbtasks.DbTasksException;
import io.dbtasks.EnqueueResult;
import io.dbtasks.RetryPolicy;
import io.dbtasks.Task;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.event.TaskEvent;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.execution.HandlerRegistry;
import io.dbtasks.internal.query.TaskKeys;
import io.dbtasks.internal.query.TaskRows;
import io.dbtasks.internal.support.EngineConfig;
import io.dbtasks.internal.support.Events;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.internal.support.PathHealth;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Inserts tasks. A task with an idempotency key is an upsert-do-nothing on the key's unique index:
 * PostgreSQL skips the insert with {@code ON CONFLICT DO NOTHING}; MariaDB and H2 report the unique
 * violation, which does not spoil their transaction. Either way the existing task is read back and
 * returned as a duplicate, never an error.
 */
public final class Enqueuer {
    private final Jdbc jdbc;
    private final Dialect dialect;
    private final TaskRows rows;
    private final HandlerRegistry handlers;
    private final EngineConfig config;
    /** Where unset task options take the engine's defaults. */
    private final TaskDefaults defaults;

    private final Consumer<String> wake;
    private final Events events;
    private final EnqueueSignals signals;
    /** Whether enqueueing works; see {@link PathHealth}. */
    private final PathHealth health;
    /** The most keyless tasks one multi-row INSERT takes (18 parameters each). */
    static final int MAX_MULTI_ROW = 500;
    /** The INSERT of workflow steps ({@link #insertSteps}): the task columns and the step's own. */
    private final String stepPrefix;
    /** One step's VALUES row: {@link #valuesRow} with its status bound and the step's columns. */
    private final String stepRow;
    /** The most lone enqueues one statement stores together; see {@link #combined}. */
    static final int MAX_COMBINED = 100;

    /** How long a caller waiting for its combined enqueue parks at most before it looks again. */
    private static final long COMBINE_PARK_NANOS = 1_000_000;

    private final ReentrantLock combineLock = new ReentrantLock();
    private final ConcurrentLinkedQueue<Combining> waitingToCombine = new ConcurrentLinkedQueue<>();

    private final String insertPrefix;
    private final String valuesRow;
    private final String insertSql;
    private final TaskKeys keys;

    public Enqueuer(
            Jdbc jdbc,
            Dialect dialect,
            HandlerRegistry handlers,
            EngineConfig config,
            Consumer<String> wake,
            Events events) {
        this(
                jdbc,
                dialect,
                handlers,
                config,
                wake,
                events,
                EnqueueSignals.unthrottled(jdbc, dialect),
                new PathHealth("an enqueue", PathHealth.DEFAULT_HANG));
    }

    public Enqueuer(
            Jdbc jdbc,
            Dialect dialect,
            HandlerRegistry handlers,
            EngineConfig config,
            Consumer<String> wake,
            Events events,
            EnqueueSignals signals,
            PathHealth health) {
        this.signals = signals;
        this.health = health;
        this.events = events;
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.rows = new TaskRows(dialect);
        this.handlers = handlers;
        this.config = config;
        this.defaults = TaskDefaults.of(config);
        this.wake = wake;
        this.insertPrefix = "INSERT INTO dbtasks_task (queue, kind, idempotency_key, name, reference, payload, status,"
                + " priority, attempt, max_attempts, backoff, backoff_initial_ms, backoff_max_ms, backoff_multiplier,"
                + " backoff_jitter, timeout_ms, trace_parent, concurrency_key, run_at, created_at, updated_at) VALUES ";
        this.valuesRow = "(?, ?, ?, ?, ?, ?, " + Dialect.status(TaskStatus.PENDING)
                + ", ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(?, "
                + dialect.nowPlusMillis() + "), " + dialect.statementTime() + ", " + dialect.statementTime() + ")";
        this.insertSql = insertPrefix + valuesRow;
        this.keys = new TaskKeys(dialect);
        this.stepPrefix = insertPrefix.replace(") VALUES ", ", workflow_id, step, waiting_for) VALUES ");
        this.stepRow =
                valuesRow.replace(Dialect.status(TaskStatus.PENDING), "?").replaceFirst("\\)$", ", ?, ?, ?)");
    }

    /**
     * Enqueues in one transaction of its own. The new tasks' events are held from before the commit
     * until ENQUEUED is out, so a local claim that follows at once is published after it. Where one
     * statement stores every task and neither events nor a signal to other instances need the
     * transaction, the statement runs alone in auto-commit mode: one round trip instead of three.
     * Other instances are signalled through {@link EnqueueSignals}: in the transaction when the queue
     * was not signalled lately, else by a trailing signal after the commit.
     */
    public List<EnqueueResult> enqueue(List<TaskRequest> requests) {
        long call = health.begin();
        Throwable error = null;
        try {
            return enqueueTracked(requests);
        } catch (RuntimeException | Error e) {
            error = e;
            throw e;
        } finally {
            health.end(call, error);
        }
    }

    private List<EnqueueResult> enqueueTracked(List<TaskRequest> requests) {
        List<String> payloads = payloads(requests);
        Set<String> signalled = signals.claim(requestedQueues(requests));
        List<EnqueueResult> results;
        if (signalled.isEmpty()
                && !events.enabled()
                && dialect.combinesEnqueues()
                && requests.size() == 1
                && requests.get(0).idempotencyKey() == null) {
            results = List.of(combined(requests.get(0), payloads.get(0)));
        } else if (signalled.isEmpty() && !events.enabled() && oneStatement(requests)) {
            results = jdbc.withConnection(
                    "Enqueue of " + requests.size() + " task(s)", c -> insertAll(c, requests, payloads));
        } else {
            results = enqueueInTransaction(requests, payloads, signalled);
        }
        Set<String> fresh = newTaskQueues(results);
        Set<String> trailing = new LinkedHashSet<>(fresh);
        trailing.removeAll(signalled);
        signals.committed(trailing);
        fresh.forEach(wake);
        return results;
    }

    private List<EnqueueResult> enqueueInTransaction(
            List<TaskRequest> requests, List<String> payloads, Set<String> signalled) {
        List<Long> holding = new ArrayList<>();
        List<EnqueueResult> results;
        try {
            results = jdbc.inTransaction("Enqueue of " + requests.size() + " task(s)", c -> {
                List<EnqueueResult> inserted = insertAll(c, requests, payloads);
                if (events.enabled()) {
                    for (EnqueueResult r : inserted) {
                        if (!r.duplicate()) {
                            events.hold(r.task().id());
                            holding.add(r.task().id());
                        }
                    }
                }
                Set<String> notify = newTaskQueues(inserted);
                notify.retainAll(signalled);
                // Other instances' workers hear of it when (and only if) the transaction commits.
                dialect.notifyEnqueued(c, notify);
                return inserted;
            });
        } catch (RuntimeException e) {
            holding.forEach(id -> events.release(id, null));
            throw e;
        }
        for (EnqueueResult r : results) {
            if (!r.duplicate()) {
                events.release(r.task().id(), events.event(TaskEvent.Type.ENQUEUED, r.task(), null));
            }
        }
        return results;
    }

    /** A lone keyless enqueue waiting to be stored, possibly with others; see {@link #combined}. */
    private static final class Combining {
        final TaskRequest request;
        final String payload;
        final Thread caller = Thread.currentThread();
        // Written by the thread that stores it before it sets done; read by the caller after it sees done.
        EnqueueResult result;
        RuntimeException failure;
        boolean sharedFailure; // the failure of a statement that stored other callers' tasks too
        volatile boolean done;

        Combining(TaskRequest request, String payload) {
            this.request = request;
            this.payload = payload;
        }
    }

    /**
     * Stores one keyless task, in one statement with whatever other lone keyless enqueues are waiting
     * at that moment: group commit on the client side. A caller queues its task and, if no other
     * caller is storing, becomes the one that does: it takes every queued task (at most {@link
     * #MAX_COMBINED}), stores them with one multi-row INSERT in auto-commit mode, hands each caller
     * its own row and wakes it, then wakes the next caller still waiting, if any, to store what
     * queued meanwhile. Alone, a caller stores just its own task: no waiting, no delay, the same
     * single statement as without combining. Each caller returns only after its task is committed.
     * Concurrent callers so share one round trip and one commit. If the combined
     * statement fails with a data error (SQLSTATE class 22 or 23: one caller's task is at fault), each
     * task is stored again on its own, so only the faulty one fails; any other failure (the database
     * unreachable) is every caller's.
     */
    private EnqueueResult combined(TaskRequest request, String payload) {
        Combining mine = new Combining(request, payload);
        waitingToCombine.add(mine);
        boolean interrupted = false;
        while (!mine.done) {
            if (combineLock.tryLock()) {
                try {
                    if (!mine.done) {
                        List<Combining> batch = new ArrayList<>();
                        Combining next;
                        while (batch.size() < MAX_COMBINED && (next = waitingToCombine.poll()) != null) {
                            batch.add(next);
                        }
                        try {
                            store(batch);
                        } finally {
                            for (Combining w : batch) {
                                if (w.result == null && w.failure == null) { // store was cut short by an Error
                                    w.failure = new DbTasksException(
                                            "Enqueue failed: the thread storing it with others hit an error; retry");
                                }
                                w.done = true;
                                if (w != mine) {
                                    LockSupport.unpark(w.caller);
                                }
                            }
                        }
                    }
                } finally {
                    combineLock.unlock();
                }
                Combining head = waitingToCombine.peek();
                if (head != null) {
                    LockSupport.unpark(head.caller); // the next to store, if it is waiting
                }
            } else {
                // Woken when stored, or when the one storing is done and this may be next. The timeout
                // only bounds a wake-up lost to a race with the one storing (that one stored mine).
                LockSupport.parkNanos(this, COMBINE_PARK_NANOS);
                // The task may be in a statement already: wait for it anyway, without spinning on the
                // interrupt (park returns at once while it is set), and keep it for the caller.
                interrupted |= Thread.interrupted();
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (mine.failure != null) {
            // A failure several callers share is thrown to each as its own exception, with this stack.
            throw mine.sharedFailure ? new DbTasksException(mine.failure.getMessage(), mine.failure) : mine.failure;
        }
        return mine.result;
    }

    /** Stores a batch of lone enqueues; see {@link #combined}. Called holding combineLock. */
    private void store(List<Combining> batch) {
        List<TaskRequest> requests = new ArrayList<>(batch.size());
        List<String> payloads = new ArrayList<>(batch.size());
        for (Combining w : batch) {
            requests.add(w.request);
            payloads.add(w.payload);
        }
        try {
            List<EnqueueResult> results = jdbc.withConnection(
                    "Enqueue of " + batch.size() + " task(s)", c -> insertAll(c, requests, payloads));
            for (int i = 0; i < batch.size(); i++) {
                batch.get(i).result = results.get(i);
            }
        } catch (RuntimeException e) {
            if (batch.size() > 1 && isDataError(e)) {
                for (Combining w : batch) {
                    try {
                        w.result = jdbc.withConnection("Enqueue of 1 task", c -> insertOne(c, w.request, w.payload));
                    } catch (RuntimeException own) {
                        w.failure = own;
                    }
                }
            } else {
                for (Combining w : batch) {
                    w.failure = e;
                    w.sharedFailure = batch.size() > 1;
                }
            }
        }
    }

    /** @return whether {@code e} comes from a data exception or an integrity violation (SQLSTATE 22, 23) */
    private static boolean isDataError(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                String state = sql.getSQLState();
                return state.startsWith("22") || state.startsWith("23");
            }
        }
        return false;
    }

    /** @return whether {@link #insertAll} stores {@code requests} with one statement */
    private static boolean oneStatement(List<TaskRequest> requests) {
        if (requests.size() == 1) {
            // A keyed task takes two statements (its key, then the task) and so a transaction.
            return requests.get(0).idempotencyKey() == null;
        }
        if (requests.size() > MAX_MULTI_ROW) {
            return false;
        }
        for (TaskRequest r : requests) {
            if (r.idempotencyKey() != null) {
                return false;
            }
        }
        return true;
    }

    private static Set<String> requestedQueues(List<TaskRequest> requests) {
        Set<String> queues = new LinkedHashSet<>();
        for (TaskRequest r : requests) {
            queues.add(queueOf(r));
        }
        return queues;
    }

    private static String queueOf(TaskRequest r) {
        return TaskDefaults.queue(r.queue());
    }

    /** @return the request's options with the engine's defaults applied, as every producer gets them */
    private TaskDefaults.Resolved resolved(TaskRequest r) {
        return defaults.resolve(r.options());
    }

    /** Enqueues on the caller's connection and transaction. */
    public List<EnqueueResult> enqueue(Connection connection, List<TaskRequest> requests) {
        List<String> payloads = payloads(requests);
        try {
            List<EnqueueResult> results = insertAll(connection, requests, payloads);
            // Other instances' workers hear of it when (and only if) the caller's transaction commits.
            dialect.notifyEnqueued(connection, newTaskQueues(results));
            wakeQueues(results);
            return results;
        } catch (SQLException e) {
            throw Jdbc.failure("Enqueue of " + requests.size() + " task(s)", e);
        }
    }

    /**
     * A workflow step to insert ({@link #insertSteps}).
     *
     * @param request its task, without an idempotency key
     * @param workflowId its workflow
     * @param name its name in the workflow
     * @param waitingFor how many dependencies it waits for: 0 inserts it PENDING, more WAITING
     */
    public record Step(TaskRequest request, long workflowId, String name, int waitingFor) {}

    /**
     * Inserts workflow steps on the caller's connection and transaction, each in its first state
     * (WAITING with its count of dependencies, or PENDING), with one multi-row INSERT per {@link
     * #MAX_MULTI_ROW} steps: a WAITING step is never PENDING, not even inside the transaction, and
     * no second statement touches the rows. Other instances' workers of the PENDING steps' queues
     * hear of them when the caller's transaction commits.
     *
     * @param c the caller's connection, in its transaction
     * @param steps the steps, none with an idempotency key
     * @return each step's task, in the order of {@code steps}
     * @throws SQLException if the database fails
     */
    public List<EnqueueResult> insertSteps(Connection c, List<Step> steps) throws SQLException {
        List<EnqueueResult> results = new ArrayList<>(steps.size());
        for (int from = 0; from < steps.size(); from += MAX_MULTI_ROW) {
            List<Step> page = steps.subList(from, Math.min(steps.size(), from + MAX_MULTI_ROW));
            String sql = stepPrefix + String.join(", ", java.util.Collections.nCopies(page.size(), stepRow));
            java.util.Optional<String> readingBack = dialect.insertReadingBack(sql);
            List<Task> tasks = new ArrayList<>(page.size());
            try (PreparedStatement ps = readingBack.isPresent()
                    ? c.prepareStatement(readingBack.get())
                    : c.prepareStatement(sql, new String[] {"id"})) {
                int i = 1;
                for (Step s : page) {
                    if (s.request().idempotencyKey() != null) {
                        throw new IllegalArgumentException(
                                "Workflow step '" + s.name() + "' has an idempotency key; steps take none");
                    }
                    i = bindStep(ps, i, s, payloadJson(s.request()));
                }
                if (readingBack.isPresent()) {
                    List<Generated> rows = new ArrayList<>(page.size());
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            rows.add(generated(rs));
                        }
                    }
                    rows.sort(java.util.Comparator.comparingLong(Generated::id));
                    for (int k = 0; k < rows.size() && k < page.size(); k++) {
                        Step s = page.get(k);
                        Task t = inserted(rows.get(k), s.request(), payloadJson(s.request()));
                        tasks.add(new Task(
                                t.id(),
                                t.queue(),
                                t.kind(),
                                stepStatus(s),
                                t.priority(),
                                t.attempt(),
                                t.maxAttempts(),
                                t.idempotencyKey(),
                                t.name(),
                                t.reference(),
                                t.payload(),
                                t.runAt(),
                                null,
                                null,
                                null,
                                false,
                                t.createdAt(),
                                t.updatedAt(),
                                null,
                                null,
                                null,
                                t.traceParent(),
                                t.concurrencyKey(),
                                s.workflowId()));
                    }
                } else {
                    ps.executeUpdate();
                    List<Long> ids = new ArrayList<>(page.size());
                    try (ResultSet keys = ps.getGeneratedKeys()) {
                        while (keys.next()) {
                            ids.add(keys.getLong(1));
                        }
                    }
                    tasks.addAll(selectByIds(c, ids));
                    tasks.sort(java.util.Comparator.comparingLong(Task::id));
                }
            }
            if (tasks.size() != page.size()) {
                throw new SQLException("Inserted " + page.size() + " steps but read back " + tasks.size());
            }
            for (Task t : tasks) {
                results.add(new EnqueueResult(t, false));
            }
        }
        Set<String> ready = new LinkedHashSet<>();
        for (EnqueueResult r : results) {
            if (r.task().status() == TaskStatus.PENDING) {
                ready.add(r.task().queue());
            }
        }
        dialect.notifyEnqueued(c, ready);
        if (events.enabled()) {
            for (EnqueueResult r : results) {
                events.task(TaskEvent.Type.ENQUEUED, r.task(), null);
            }
        }
        ready.forEach(wake);
        return results;
    }

    private static TaskStatus stepStatus(Step s) {
        return s.waitingFor() > 0 ? TaskStatus.WAITING : TaskStatus.PENDING;
    }

    private String payloadJson(TaskRequest r) {
        return payloads(List.of(r)).get(0);
    }

    /** Binds one {@link #stepRow} from parameter {@code i} on; returns the next parameter index. */
    private int bindStep(PreparedStatement ps, int i, Step s, String payload) throws SQLException {
        // the row's status parameter comes after the payload, as the status literal in valuesRow
        TaskDefaults.Resolved options = resolved(s.request());
        ps.setString(i++, options.queue());
        ps.setString(i++, s.request().kind());
        ps.setString(i++, null);
        ps.setString(i++, s.request().name());
        ps.setString(i++, s.request().reference());
        ps.setString(i++, payload);
        ps.setString(i++, stepStatus(s).name());
        i = bindFromPriority(ps, i, s.request());
        ps.setLong(i++, s.workflowId());
        ps.setString(i++, s.name());
        ps.setInt(i++, s.waitingFor());
        return i;
    }

    /**
     * What {@link #insertKeyed} did in the caller's transaction, and what is left for after it ends:
     * the new tasks' ENQUEUED events and the wake-up of their queues' local workers.
     */
    public static final class KeyedInsert {
        private final int inserted;
        private final List<Task> held;
        private final Set<String> queues;
        private final Enqueuer enqueuer;

        private KeyedInsert(Enqueuer enqueuer, int inserted, List<Task> held, Set<String> queues) {
            this.enqueuer = enqueuer;
            this.inserted = inserted;
            this.held = held;
            this.queues = queues;
        }

        /** @return how many tasks were inserted (keys that existed inserted nothing) */
        public int inserted() {
            return inserted;
        }

        /** Publishes ENQUEUED for the new tasks and wakes their queues; call after the commit. */
        public void committed() {
            for (Task t : held) {
                enqueuer.events.release(t.id(), enqueuer.events.event(TaskEvent.Type.ENQUEUED, t, null));
            }
            queues.forEach(enqueuer.wake);
        }

        /** Drops the held events; call after a rollback. */
        public void rolledBack() {
            for (Task t : held) {
                enqueuer.events.release(t.id(), null);
            }
        }
    }

    /**
     * Inserts tasks that all have an idempotency key and ready-made JSON payloads, with multi-row
     * INSERTs on the caller's connection and transaction (the recurring-schedule path: a poll enqueues
     * hundreds of slot tasks at once, and one round trip per task would cap it). A key that exists
     * inserts nothing: on PostgreSQL through {@code ON CONFLICT DO NOTHING}; elsewhere a duplicate fails
     * the statement, which is rolled back to a savepoint and the tasks inserted one by one, each
     * duplicate skipped.
     *
     * @param c the caller's connection, in a transaction
     * @param requests tasks with idempotency keys; their payload is ignored
     * @param payloadJson each task's payload as JSON text, or {@code null}
     * @return what was inserted; the caller calls {@link KeyedInsert#committed()} or {@link
     *     KeyedInsert#rolledBack()} when its transaction ends
     */
    public KeyedInsert insertKeyed(Connection c, List<TaskRequest> requests, List<String> payloadJson)
            throws SQLException {
        if (requests.isEmpty()) {
            return new KeyedInsert(this, 0, List.of(), Set.of());
        }
        Set<String> fresh = new HashSet<>(
                keys.claim(c, requests.stream().map(TaskRequest::idempotencyKey).toList()));
        List<TaskRequest> toInsert = new ArrayList<>(fresh.size());
        List<String> toInsertPayloads = new ArrayList<>(fresh.size());
        for (int k = 0; k < requests.size(); k++) {
            if (fresh.remove(requests.get(k).idempotencyKey())) { // the first request of a key only
                toInsert.add(requests.get(k));
                toInsertPayloads.add(payloadJson.get(k));
            }
        }
        int inserted = batch(c, toInsert, toInsertPayloads);
        Set<String> queues = inserted > 0 ? requestedQueues(requests) : Set.of();
        if (inserted > 0) {
            dialect.notifyEnqueued(c, queues);
        }
        List<Task> held = List.of();
        if (events.enabled() && inserted > 0) {
            held = new ArrayList<>();
            for (Task t : selectByKeys(c, requests)) {
                events.hold(t.id());
                held.add(t);
            }
        }
        return new KeyedInsert(this, inserted, held, queues);
    }

    private boolean isUniqueViolation(SQLException e) {
        for (SQLException x = e; x != null; x = x.getNextException()) {
            if (dialect.isUniqueViolation(x)) {
                return true;
            }
        }
        return e.getCause() instanceof SQLException cause && dialect.isUniqueViolation(cause);
    }

    /** Multi-row INSERTs of up to {@link #MAX_MULTI_ROW} rows. @return the rows inserted */
    private int batch(Connection c, List<TaskRequest> requests, List<String> payloadJson) throws SQLException {
        int inserted = 0;
        for (int from = 0; from < requests.size(); from += MAX_MULTI_ROW) {
            int to = Math.min(requests.size(), from + MAX_MULTI_ROW);
            String sql = insertPrefix + String.join(", ", java.util.Collections.nCopies(to - from, valuesRow));
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                int index = 1;
                for (int k = from; k < to; k++) {
                    index = bind(ps, index, requests.get(k), payloadJson.get(k));
                }
                inserted += ps.executeUpdate();
            }
        }
        return inserted;
    }

    /** The tasks of this batch just inserted (created in this transaction), for their events. */
    private List<Task> selectByKeys(Connection c, List<TaskRequest> requests) throws SQLException {
        List<Task> tasks = new ArrayList<>(requests.size());
        for (int from = 0; from < requests.size(); from += MAX_MULTI_ROW) {
            List<TaskRequest> part = requests.subList(from, Math.min(requests.size(), from + MAX_MULTI_ROW));
            try (PreparedStatement ps = c.prepareStatement("SELECT " + Dialect.TASK_COLUMNS
                    + " FROM dbtasks_task WHERE " + Dialect.LIVE + " AND status = " + Dialect.status(TaskStatus.PENDING)
                    + " AND attempt = 0 AND idempotency_key IN ("
                    + String.join(", ", java.util.Collections.nCopies(part.size(), "?")) + ")")) {
                for (int k = 0; k < part.size(); k++) {
                    ps.setString(k + 1, part.get(k).idempotencyKey());
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        tasks.add(rows.task(rs));
                    }
                }
            }
        }
        return tasks;
    }

    private List<String> payloads(List<TaskRequest> requests) {
        List<String> payloads = new ArrayList<>(requests.size());
        for (TaskRequest r : requests) {
            payloads.add(handlers.write(r.payload()));
        }
        return payloads;
    }

    /**
     * Publishes ENQUEUED for tasks written in the caller's transaction (before it commits, so before
     * any claim), then wakes their queues' local workers.
     */
    private void wakeQueues(List<EnqueueResult> results) {
        if (events.enabled()) {
            for (EnqueueResult r : results) {
                if (!r.duplicate()) {
                    events.task(TaskEvent.Type.ENQUEUED, r.task(), null);
                }
            }
        }
        newTaskQueues(results).forEach(wake);
    }

    private static Set<String> newTaskQueues(List<EnqueueResult> results) {
        Set<String> queues = new LinkedHashSet<>();
        for (EnqueueResult r : results) {
            if (!r.duplicate()) {
                queues.add(r.task().queue());
            }
        }
        return queues;
    }

    private List<EnqueueResult> insertAll(Connection c, List<TaskRequest> requests, List<String> payloads)
            throws SQLException {
        List<EnqueueResult> results = new ArrayList<>(requests.size());
        int i = 0;
        while (i < requests.size()) {
            if (requests.get(i).idempotencyKey() != null) {
                results.add(insertOne(c, requests.get(i), payloads.get(i)));
                i++;
                continue;
            }
            // A run of keyless tasks: one multi-row INSERT, as nothing in it can be a duplicate.
            int end = i;
            while (end < requests.size()
                    && end - i < MAX_MULTI_ROW
                    && requests.get(end).idempotencyKey() == null) {
                end++;
            }
            results.addAll(
                    end - i == 1
                            ? List.of(insertOne(c, requests.get(i), payloads.get(i)))
                            : insertMany(c, requests.subList(i, end), payloads.subList(i, end)));
            i = end;
        }
        return results;
    }

    private EnqueueResult insertOne(Connection c, TaskRequest r, String payload) throws SQLException {
        String key = r.idempotencyKey();
        if (key != null && keys.claim(c, List.of(key)).isEmpty()) {
            return existing(c, key);
        }
        String sql = insertSql;
        java.util.Optional<String> readingBack = dialect.insertReadingBack(sql);
        boolean returning = readingBack.isPresent();
        try (PreparedStatement ps =
                returning ? c.prepareStatement(readingBack.get()) : c.prepareStatement(sql, new String[] {"id"})) {
            bind(ps, 1, r, payload);
            if (returning) {
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        return new EnqueueResult(inserted(generated(rs), r, payload), false);
                    }
                }
                throw new SQLException("The database returned no row for the inserted task");
            }
            ps.executeUpdate();
            try (ResultSet keys = ps.getGeneratedKeys()) {
                if (!keys.next()) {
                    throw new SQLException("The database returned no id for the inserted task");
                }
                return new EnqueueResult(select(c, "id = ?", keys.getLong(1), ""), false);
            }
        }
    }

    /**
     * Inserts keyless tasks with one statement. Identity values are drawn in row order, so the tasks
     * sorted by id line up with the requests. Where the dialect has one ({@link
     * Dialect#insertManySql()}, PostgreSQL), the statement binds one array per column and its text is
     * the same for any number of tasks, so the driver prepares it once per connection; else a
     * multi-row VALUES, a new text (parsed and planned anew until prepared) for each batch size. The
     * measured gain is in BENCHMARKS.md.
     */
    private List<EnqueueResult> insertMany(Connection c, List<TaskRequest> requests, List<String> payloads)
            throws SQLException {
        java.util.Optional<String> arrays = dialect.insertManySql();
        String sql = arrays.orElseGet(
                () -> insertPrefix + String.join(", ", java.util.Collections.nCopies(requests.size(), valuesRow)));
        List<Task> tasks = new ArrayList<>(requests.size());
        java.util.Optional<String> readingBack = arrays.isPresent() ? arrays : dialect.insertReadingBack(sql);
        boolean returning = readingBack.isPresent();
        try (PreparedStatement ps =
                returning ? c.prepareStatement(readingBack.get()) : c.prepareStatement(sql, new String[] {"id"})) {
            if (arrays.isPresent()) {
                bindArrays(c, ps, requests, payloads);
            } else {
                int index = 1;
                for (int k = 0; k < requests.size(); k++) {
                    index = bind(ps, index, requests.get(k), payloads.get(k));
                }
            }
            if (returning) {
                List<Generated> rows = new ArrayList<>(requests.size());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows.add(generated(rs));
                    }
                }
                if (rows.size() != requests.size()) {
                    throw new SQLException("Inserted " + requests.size() + " tasks but read back " + rows.size());
                }
                rows.sort(java.util.Comparator.comparingLong(Generated::id));
                for (int k = 0; k < rows.size(); k++) {
                    tasks.add(inserted(rows.get(k), requests.get(k), payloads.get(k)));
                }
            } else {
                ps.executeUpdate();
                List<Long> ids = new ArrayList<>(requests.size());
                try (ResultSet keys = ps.getGeneratedKeys()) {
                    while (keys.next()) {
                        ids.add(keys.getLong(1));
                    }
                }
                tasks.addAll(selectByIds(c, ids));
            }
        }
        if (tasks.size() != requests.size()) {
            throw new SQLException("Inserted " + requests.size() + " tasks but read back " + tasks.size());
        }
        tasks.sort(java.util.Comparator.comparingLong(Task::id));
        List<EnqueueResult> results = new ArrayList<>(tasks.size());
        for (Task t : tasks) {
            results.add(new EnqueueResult(t, false));
        }
        return results;
    }

    private List<Task> selectByIds(Connection c, List<Long> ids) throws SQLException {
        List<Task> tasks = new ArrayList<>(ids.size());
        try (PreparedStatement ps = c.prepareStatement("SELECT " + Dialect.TASK_COLUMNS + " FROM dbtasks_task WHERE id"
                + " IN (" + String.join(", ", java.util.Collections.nCopies(ids.size(), "?")) + ")")) {
            for (int k = 0; k < ids.size(); k++) {
                ps.setLong(k + 1, ids.get(k));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    tasks.add(rows.task(rs));
                }
            }
        }
        return tasks;
    }

    private EnqueueResult existing(Connection c, String key) throws SQLException {
        Task task = select(c, "idempotency_key = ?", key, dialect.latestCommittedRead());
        if (task == null) {
            throw new SQLException("Idempotency key '" + key + "' conflicted, but no task with it is visible;"
                    + " it may have been deleted concurrently. Enqueue again");
        }
        return new EnqueueResult(task, true);
    }

    private Task select(Connection c, String where, Object arg, String suffix) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("SELECT " + Dialect.TASK_COLUMNS + " FROM dbtasks_task WHERE " + where + suffix)) {
            ps.setObject(1, arg);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rows.task(rs) : null;
            }
        }
    }

    /** Binds one VALUES row from parameter {@code i} on; returns the next parameter index. */
    /** What the database filled in of a new task row: its {@link Dialect#GENERATED_COLUMNS}. */
    private record Generated(
            long id, java.time.Instant runAt, java.time.Instant createdAt, java.time.Instant updatedAt) {}

    private Generated generated(ResultSet rs) throws SQLException {
        return new Generated(
                rs.getLong(1),
                dialect.getInstant(rs, "run_at"),
                dialect.getInstant(rs, "created_at"),
                dialect.getInstant(rs, "updated_at"));
    }

    /** The task just inserted for {@code r}: what the database filled in, and what {@link #bind} wrote. */
    private Task inserted(Generated g, TaskRequest r, String payload) {
        TaskDefaults.Resolved options = resolved(r);
        return new Task(
                g.id(),
                options.queue(),
                r.kind(),
                TaskStatus.PENDING,
                options.priority(),
                0,
                options.maxAttempts(),
                r.idempotencyKey(),
                r.name(),
                r.reference(),
                payload,
                g.runAt(),
                null,
                null,
                null,
                false,
                g.createdAt(),
                g.updatedAt(),
                null,
                null,
                null,
                r.traceParent(),
                r.concurrencyKey(),
                null);
    }

    /** Binds the arrays of {@link Dialect#insertManySql()}, one element per request, in its order. */
    private void bindArrays(Connection c, PreparedStatement ps, List<TaskRequest> requests, List<String> payloads)
            throws SQLException {
        int n = requests.size();
        String[] queues = new String[n];
        String[] kinds = new String[n];
        String[] names = new String[n];
        String[] references = new String[n];
        Integer[] priorities = new Integer[n];
        Integer[] maxAttempts = new Integer[n];
        String[] backoffs = new String[n];
        Long[] initials = new Long[n];
        Long[] maxima = new Long[n];
        Double[] multipliers = new Double[n];
        Double[] jitters = new Double[n];
        Long[] timeouts = new Long[n];
        String[] traceParents = new String[n];
        String[] concurrencyKeys = new String[n];
        Long[] runAtSeconds = new Long[n];
        Integer[] runAtMicros = new Integer[n];
        Long[] runAfters = new Long[n];
        for (int k = 0; k < n; k++) {
            TaskRequest r = requests.get(k);
            TaskDefaults.Resolved options = resolved(r);
            RetryPolicy policy = options.retryPolicy();
            var timeout = options.timeout();
            queues[k] = options.queue();
            kinds[k] = r.kind();
            names[k] = r.name();
            references[k] = r.reference();
            priorities[k] = options.priority();
            maxAttempts[k] = options.maxAttempts();
            backoffs[k] = policy.backoff().name();
            initials[k] = policy.initial().toMillis();
            maxima[k] = policy.max().toMillis();
            multipliers[k] = policy.multiplier();
            jitters[k] = policy.jitter();
            timeouts[k] = timeout == null ? null : timeout.toMillis();
            traceParents[k] = r.traceParent();
            concurrencyKeys[k] = r.concurrencyKey();
            if (r.runAt() != null) {
                // Rounded to the microsecond as the driver rounds a bound timestamp; 1,000,000 carries.
                runAtSeconds[k] = r.runAt().getEpochSecond();
                runAtMicros[k] = (r.runAt().getNano() + 500) / 1000;
            }
            runAfters[k] = r.runAfter() != null ? r.runAfter().toMillis() : 0L;
        }
        int i = 1;
        ps.setArray(i++, c.createArrayOf("text", queues));
        ps.setArray(i++, c.createArrayOf("text", kinds));
        ps.setArray(i++, c.createArrayOf("text", names));
        ps.setArray(i++, c.createArrayOf("text", references));
        ps.setArray(i++, c.createArrayOf("text", payloads.toArray(new String[0])));
        ps.setArray(i++, c.createArrayOf("integer", priorities));
        ps.setArray(i++, c.createArrayOf("integer", maxAttempts));
        ps.setArray(i++, c.createArrayOf("text", backoffs));
        ps.setArray(i++, c.createArrayOf("bigint", initials));
        ps.setArray(i++, c.createArrayOf("bigint", maxima));
        ps.setArray(i++, c.createArrayOf("float8", multipliers));
        ps.setArray(i++, c.createArrayOf("float8", jitters));
        ps.setArray(i++, c.createArrayOf("bigint", timeouts));
        ps.setArray(i++, c.createArrayOf("text", traceParents));
        ps.setArray(i++, c.createArrayOf("text", concurrencyKeys));
        ps.setArray(i++, c.createArrayOf("bigint", runAtSeconds));
        ps.setArray(i++, c.createArrayOf("integer", runAtMicros));
        ps.setArray(i, c.createArrayOf("bigint", runAfters));
    }

    private int bind(PreparedStatement ps, int i, TaskRequest r, String payload) throws SQLException {
        TaskDefaults.Resolved options = resolved(r);
        ps.setString(i++, options.queue());
        ps.setString(i++, r.kind());
        ps.setString(i++, r.idempotencyKey());
        ps.setString(i++, r.name());
        ps.setString(i++, r.reference());
        ps.setString(i++, payload);
        return bindFromPriority(ps, i, r);
    }

    /** Binds a row's columns from the priority to the run-after; returns the next parameter index. */
    private int bindFromPriority(PreparedStatement ps, int i, TaskRequest r) throws SQLException {
        TaskDefaults.Resolved options = resolved(r);
        RetryPolicy policy = options.retryPolicy();
        int maxAttempts = options.maxAttempts();
        var timeout = options.timeout();
        ps.setInt(i++, options.priority());
        ps.setInt(i++, maxAttempts);
        ps.setString(i++, policy.backoff().name());
        ps.setLong(i++, policy.initial().toMillis());
        ps.setLong(i++, policy.max().toMillis());
        ps.setDouble(i++, policy.multiplier());
        ps.setDouble(i++, policy.jitter());
        if (timeout == null) {
            ps.setNull(i++, Types.BIGINT);
        } else {
            ps.setLong(i++, timeout.toMillis());
        }
        ps.setString(i++, r.traceParent());
        ps.setString(i++, r.concurrencyKey());
        dialect.setInstant(ps, i++, r.runAt());
        ps.setLong(i++, r.runAfter() != null ? r.runAfter().toMillis() : 0L);
        return i;
    }
}
