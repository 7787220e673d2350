package io.dbtasks.internal.completion;

import io.dbtasks.AttemptOutcome;
import io.dbtasks.DbTasksException;
import io.dbtasks.Task;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.completion.TaskUpdate.Exit;
import io.dbtasks.internal.completion.TaskUpdate.Value;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settles attempts: SUCCEEDED, retry (back to PENDING after a backoff), FAILED, CANCELLED, or handed
 * back on shutdown. One operation does it for any mix of them, {@link #settle(Connection, List, Set)},
 * each attempt an {@link Outcome} value naming its way out of RUNNING ({@link Exit}), whose column
 * rules are {@link TaskUpdate}'s one table. Every write is guarded by the lease ({@code id AND
 * lease_token AND RUNNING}) and goes, in the same transaction, with the attempt row; an attempt
 * whose guard matches 0 rows lost its lease: nothing of it is written and the caller discards its
 * result.
 *
 * <p>The generic path serves every database: one guarded UPDATE for a single attempt; for several,
 * a locking read of their rows still RUNNING (the guard then checked under the locks), one UPDATE
 * per way out writing each row's own values with {@code CASE id WHEN ... END}, and one multi-row
 * INSERT of the attempt rows. Where the dialect settles many attempts and records them in one
 * statement ({@link Dialect#settleManySql}), that goes first, for any batch size, and the generic
 * path takes only what is left that may still settle another way.
 *
 * <p>A retry never undoes an operator's cancel request: an attempt that fails while {@code
 * cancel_requested} is set ends the task CANCELLED instead of sending it back to PENDING, whether or
 * not the worker had noticed the request yet; a hand-back likewise.
 */
public final class Completions {
    private static final Logger log = LoggerFactory.getLogger(Completions.class);

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final Attempts attempts;
    private final TaskUpdate update;
    /** The dialect's one statement per exit that leaves an attempt row; empty where it has none. */
    private final Map<Exit, String> oneStatement = new EnumMap<>(Exit.class);
    /** The guarded single-row UPDATE per exit. Binds: its per-row values, id, token. */
    private final Map<Exit, TaskUpdate> single = new EnumMap<>(Exit.class);

    /** What a step's end does to the steps waiting for it. */
    private final Dependents dependents;
    /** Inserts the steps a successful attempt adds to its workflow. */
    private final FanOut fanOut;

    /** Inserts the steps a successful attempt adds to its workflow, on the settling transaction. */
    @FunctionalInterface
    public interface FanOut {
        void add(Connection c, Task adder, List<AddedStep> steps) throws SQLException;
    }

    /** Writes a successful attempt's result. Binds: result, id, token. */
    private final TaskUpdate storeResult;

    public Completions(Jdbc jdbc, Dialect dialect, Attempts attempts) {
        this(jdbc, dialect, attempts, new Dependents(dialect, queue -> {}), (c, adder, steps) -> {
            throw new IllegalStateException("this engine adds no workflow steps");
        });
    }

    /**
     * @param jdbc connections
     * @param dialect the database's dialect
     * @param attempts writes attempt rows
     * @param dependents what a workflow step's end does to its dependents
     * @param fanOut inserts the steps a successful attempt adds to its workflow
     */
    public Completions(Jdbc jdbc, Dialect dialect, Attempts attempts, Dependents dependents, FanOut fanOut) {
        this.jdbc = jdbc;
        this.dependents = dependents;
        this.fanOut = fanOut;
        this.dialect = dialect;
        this.attempts = attempts;
        this.update = new TaskUpdate(dialect);
        this.storeResult =
                update.set("result = ?").whereIn(TaskStatus.SUCCEEDED).and("id = ? AND lease_token = ?");
        for (Exit exit : Exit.values()) {
            single.put(exit, update.leaving(exit, "?", "?").held());
            if (exit.history()) {
                dialect.settleManySql(
                                (backoff, error) ->
                                        update.leaving(exit, backoff, error).assignments(),
                                exit.cancelGuard(),
                                exit.status().isFinal())
                        .ifPresent(sql -> oneStatement.put(exit, sql));
            }
        }
    }

    /**
     * One attempt's outcome as a value: how it leaves RUNNING and what it writes.
     *
     * @param task the attempt's task, as claimed
     * @param exit the way out of RUNNING
     * @param backoffMs the backoff before a retry, in milliseconds; 0 for other exits
     * @param error the text for {@code last_error}, or {@code null} where the exit writes none
     * @param attempt its attempt row, or {@code null} for none (a hand-back)
     * @param result the handler's result to store with a success, or {@code null}
     * @param added the steps a success adds to its workflow; empty for none
     */
    record Outcome(
            Task task,
            Exit exit,
            long backoffMs,
            String error,
            Attempts.Row attempt,
            String result,
            List<AddedStep> added) {
        Outcome(Task task, Exit exit, long backoffMs, String error, Attempts.Row attempt) {
            this(task, exit, backoffMs, error, attempt, null, List.of());
        }

        /** @return whether settling it writes more than the task row and its attempt row */
        boolean needsTransaction() {
            return task.workflowId() != null || result != null;
        }

        /** @return the outcome that applies instead while a cancel is requested, or {@code null} */
        Outcome cancelledInstead() {
            Exit instead = exit.cancelledInstead();
            if (instead == null) {
                return null;
            }
            String why = exit == Exit.RETRY
                    ? "Cancelled by an operator; the attempt failed with " + error
                    : "Cancelled by an operator; handed back before it finished";
            return new Outcome(task, instead, 0, why, attempt);
        }

        long token() {
            return task.fencingToken();
        }
    }

    /**
     * A successful attempt waiting to be recorded.
     *
     * @param task the attempt's task, as claimed
     * @param durationMs how long it ran
     * @param result the handler's result (JSON text) to store with it, or {@code null}
     * @param added the steps it adds to its workflow; empty for none
     */
    public record Success(Task task, long durationMs, String result, List<AddedStep> added) {
        public Success(Task task, long durationMs) {
            this(task, durationMs, null, List.of());
        }

        Outcome outcome() {
            return new Outcome(
                    task,
                    Exit.SUCCEEDED,
                    0,
                    null,
                    Attempts.Row.of(task, durationMs, AttemptOutcome.SUCCEEDED, null),
                    result,
                    added);
        }
    }

    /**
     * A failed attempt to record.
     *
     * @param task the attempt's task, as claimed
     * @param outcome FAILED or TIMED_OUT
     * @param error what the handler threw, or the timeout
     * @param retryDelay the backoff before the retry, or {@code null} to end the task FAILED
     * @param durationMs how long the attempt ran
     * @param stackTrace {@code error}'s stack trace as stored ({@link Attempts#stackTrace}), rendered
     *     where the failure is created (the handler's thread), not on the one thread that writes
     *     outcomes; {@code null} without an error
     */
    public record Failure(
            Task task,
            AttemptOutcome outcome,
            Throwable error,
            Duration retryDelay,
            long durationMs,
            String stackTrace) {
        public Failure(Task task, AttemptOutcome outcome, Throwable error, Duration retryDelay, long durationMs) {
            this(task, outcome, error, retryDelay, durationMs, error == null ? null : Attempts.stackTrace(error));
        }

        /** @return its attempt row */
        Attempts.Row row() {
            return Attempts.Row.of(task, durationMs, outcome, error, stackTrace);
        }

        Outcome settled() {
            return new Outcome(
                    task,
                    retryDelay != null ? Exit.RETRY : Exit.FAILED,
                    retryDelay != null ? retryDelay.toMillis() : 0,
                    Attempts.reason(error),
                    row());
        }
    }

    /** One success through the batch path the engine uses; {@code false} if the lease was lost. */
    boolean succeed(Task t, long durationMs) {
        return succeedAll(List.of(new Success(t, durationMs))).contains(t.fencingToken());
    }

    /**
     * Records success on the caller's open transaction {@code c} (a transactional handler's), without
     * committing: the caller commits if this returns {@code true} and rolls back otherwise, so the
     * handler's effects and SUCCEEDED commit together or not at all.
     *
     * @param released gets the queues of the dependents it made PENDING, to wake after the commit
     * @return {@code false} if the lease was lost (0 rows)
     */
    public boolean succeedOn(
            Connection c, Task t, long durationMs, String result, List<AddedStep> added, Set<String> released)
            throws SQLException {
        return settle(c, List.of(new Success(t, durationMs, result, added).outcome()), released)
                .containsKey(t.fencingToken());
    }

    /** Wakes the local workers of {@code queues}, whose steps a committed settle released. */
    public void wakeReleased(Set<String> queues) {
        dependents.wake(queues);
    }

    /**
     * Records many successes in one transaction; an attempt whose lease was lost is left out: nothing
     * of it is written.
     *
     * @return the fencing tokens of the attempts recorded
     */
    Set<Long> succeedAll(List<Success> batch) {
        // A success that adds steps inserts tasks, which a bad request can fail: each such success
        // is settled in a transaction of its own, so it fails no other. In a batch of several, its
        // failure leaves only it out (not recorded: its task stays RUNNING until its lease expires
        // and the rescue retries it); alone, the failure is thrown to the caller.
        List<Success> shared = new ArrayList<>(batch.size());
        Set<Long> recorded = new java.util.HashSet<>();
        for (Success s : batch) {
            if (s.added().isEmpty()) {
                shared.add(s);
            } else if (batch.size() == 1) {
                recorded.addAll(settleSuccesses(List.of(s)));
            } else {
                try {
                    recorded.addAll(settleSuccesses(List.of(s)));
                } catch (DbTasksException | IllegalStateException e) {
                    log.error(
                            "Could not record the success of task {} with the steps it adds; it will be rescued"
                                    + " after its lease expires",
                            s.task().id(),
                            e);
                }
            }
        }
        if (!shared.isEmpty()) {
            recorded.addAll(settleSuccesses(shared));
        }
        return recorded;
    }

    private Set<Long> settleSuccesses(List<Success> batch) {
        String what = "Record " + batch.size() + " successful attempt(s)";
        List<Outcome> outcomes = new ArrayList<>(batch.size());
        boolean alone = true;
        for (Success s : batch) {
            Outcome o = s.outcome();
            outcomes.add(o);
            alone &= !o.needsTransaction();
        }
        // A success has no other way out, so where the dialect has one statement that is all: it needs
        // no transaction around it, and auto-commit saves the COMMIT's round trip. A workflow step's
        // dependents and a result are written with it, in one transaction.
        boolean autoCommit = alone && oneStatement.containsKey(Exit.SUCCEEDED);
        Set<String> released = java.util.concurrent.ConcurrentHashMap.newKeySet();
        Set<Long> recorded = Jdbc.retryingDeadlocks(() -> autoCommit
                        ? jdbc.withConnection(what, c -> settle(c, outcomes, released))
                        : jdbc.inTransaction(what, c -> settle(c, outcomes, released)))
                .keySet();
        dependents.wake(released);
        return recorded;
    }

    /**
     * Records failed attempts in one transaction: each a retry (back to PENDING, due its delay after
     * the database's now; CANCELLED instead if an operator asked to cancel the task while the attempt
     * ran) or FAILED, with their attempt rows. An attempt whose lease was lost is left out: nothing
     * of it is written.
     *
     * @return the status written (PENDING, CANCELLED or FAILED) by fencing token; a token missing
     *     lost its lease
     */
    Map<Long, TaskStatus> settleFailures(List<Failure> batch) {
        List<Outcome> outcomes = new ArrayList<>(batch.size());
        for (Failure f : batch) {
            outcomes.add(f.settled());
        }
        Set<String> released = java.util.concurrent.ConcurrentHashMap.newKeySet();
        Map<Long, TaskStatus> written = Jdbc.retryingDeadlocks(() -> jdbc.inTransaction(
                "Record " + batch.size() + " failed attempt(s)", c -> settle(c, outcomes, released)));
        dependents.wake(released);
        return written;
    }

    /**
     * One retry through {@link #settleFailures}.
     *
     * @return the status written (PENDING or CANCELLED), or empty if the lease was lost
     */
    Optional<TaskStatus> retry(Task t, AttemptOutcome outcome, Throwable error, Duration delay, long durationMs) {
        return Optional.ofNullable(settleFailures(List.of(new Failure(t, outcome, error, delay, durationMs)))
                .get(t.fencingToken()));
    }

    /** One FAILED through {@link #settleFailures}; {@code false} if the lease was lost. */
    boolean fail(Task t, AttemptOutcome outcome, Throwable error, long durationMs) {
        return settleFailures(List.of(new Failure(t, outcome, error, null, durationMs)))
                .containsKey(t.fencingToken());
    }

    /** CANCELLED on an operator's request while running; {@code false} if the lease was lost. */
    public boolean cancelled(Task t, Throwable error, long durationMs) {
        Outcome o = new Outcome(
                t,
                Exit.CANCELLED,
                0,
                "Cancelled by an operator while running",
                Attempts.Row.of(t, durationMs, AttemptOutcome.CANCELLED, error));
        Set<String> released = new java.util.HashSet<>();
        // A deadlock victim's transaction was rolled back whole, so it may run again.
        boolean recorded = Jdbc.retryingDeadlocks(() ->
                        jdbc.inTransaction("Record outcome of task " + t.id(), c -> settle(c, List.of(o), released)))
                .containsKey(t.fencingToken());
        dependents.wake(released);
        return recorded;
    }

    /**
     * Back to PENDING at once, giving back the attempt; no attempt row. CANCELLED instead if an
     * operator asked to cancel the task meanwhile (the request reaches the worker only with the next
     * heartbeat, so a task handed back before that would otherwise lose it).
     *
     * @return the status written (PENDING or CANCELLED), or empty if the lease was lost
     */
    public Optional<TaskStatus> handBack(Task t) {
        Outcome o = new Outcome(t, Exit.HAND_BACK, 0, null, null);
        Set<String> released = new java.util.HashSet<>();
        TaskStatus written = Jdbc.retryingDeadlocks(
                        () -> jdbc.inTransaction("Hand back task " + t.id(), c -> settle(c, List.of(o), released)))
                .get(t.fencingToken());
        dependents.wake(released);
        return Optional.ofNullable(written);
    }

    /**
     * The settle operation: moves each attempt's task out of RUNNING by its outcome's exit (or the
     * exit that applies instead while a cancel is requested) and writes the attempt rows, on the
     * caller's connection {@code c}, without committing. Rows are written in task id order, one lock
     * order for all writers.
     *
     * @param c a connection: an open transaction, or auto-commit where one statement suffices
     * @param outcomes the attempts, each task at most once
     * @return the status written by fencing token; a token missing lost its lease
     */
    Map<Long, TaskStatus> settle(Connection c, List<Outcome> outcomes, Set<String> released) throws SQLException {
        List<Outcome> sorted = new ArrayList<>(outcomes);
        sorted.sort(Comparator.comparingLong(o -> o.task().id()));
        Map<Long, TaskStatus> written = new HashMap<>();
        List<Outcome> rest = sorted;
        if (!oneStatement.isEmpty()) {
            rest = new ArrayList<>();
            for (Map.Entry<Exit, List<Outcome>> group : byExit(sorted).entrySet()) {
                String sql = oneStatement.get(group.getKey());
                Set<Long> settled = sql == null ? Set.of() : inOneStatement(c, sql, group.getValue());
                for (Outcome o : group.getValue()) {
                    if (settled.contains(o.token())) {
                        written.put(o.token(), o.exit().status());
                    } else if (sql == null || o.exit().cancelledInstead() != null) {
                        rest.add(o); // not settled yet, or may settle the other way
                    }
                }
            }
        }
        rest.sort(Comparator.comparingLong(o -> o.task().id()));
        if (rest.size() == 1) {
            settleOne(c, rest.get(0), written);
        } else if (!rest.isEmpty()) {
            settleLocked(c, rest, written);
        }
        Map<Long, TaskStatus> steps = new HashMap<>();
        for (Outcome o : sorted) {
            TaskStatus status = written.get(o.token());
            if (status == null) {
                continue; // lost its lease
            }
            if (o.result() != null && status == TaskStatus.SUCCEEDED) {
                checked(storeResult.run(c, o.result(), o.task().id(), o.token()), o.task());
            }
            if (!o.added().isEmpty() && status == TaskStatus.SUCCEEDED) {
                fanOut.add(c, o.task(), o.added()); // before its dependents count it down
            }
            if (o.task().workflowId() != null && status.isFinal()) {
                steps.put(o.task().id(), status);
            }
        }
        if (!steps.isEmpty()) {
            dependents.ended(c, steps, released);
        }
        return written;
    }

    /** The generic path for one attempt: its exit's guarded UPDATE, else the cancelled one's. */
    private void settleOne(Connection c, Outcome o, Map<Long, TaskStatus> written) throws SQLException {
        for (Outcome attempt = o; attempt != null; attempt = attempt.cancelledInstead()) {
            List<Object> args = new ArrayList<>(4);
            for (Value v : attempt.exit().perRow()) {
                args.add(v == Value.AFTER_BACKOFF ? attempt.backoffMs() : attempt.error());
            }
            args.add(attempt.task().id());
            args.add(attempt.token());
            if (checked(single.get(attempt.exit()).run(c, args.toArray()), attempt.task())) {
                if (attempt.attempt() != null) {
                    attempts.insert(c, attempt.attempt());
                }
                written.put(attempt.token(), attempt.exit().status());
                return;
            }
        }
    }

    /**
     * The generic path for many attempts: one locking read of their rows still RUNNING ({@code FOR
     * UPDATE}, by key), whose token and cancel request decide under the locks which attempts hold and
     * by which exit each leaves; then one UPDATE per exit that writes each row's own values with
     * {@code CASE id WHEN ... END} and must change exactly the rows held; then one multi-row INSERT of
     * the attempt rows. One round trip per statement whatever the batch size, and no JDBC batch whose
     * row counts a driver might not report.
     *
     * @throws IllegalStateException if an UPDATE changed another number of rows than it locked
     */
    private void settleLocked(Connection c, List<Outcome> list, Map<Long, TaskStatus> written) throws SQLException {
        Map<Long, long[]> running = new HashMap<>(); // id -> {token, cancel requested ? 1 : 0}
        Set<Long> ids = new LinkedHashSet<>();
        for (Outcome o : list) {
            ids.add(o.task().id());
        }
        try (PreparedStatement ps =
                c.prepareStatement(TaskUpdate.lockRunning(dialect, "id, lease_token, cancel_requested", ids.size()))) {
            int i = 1;
            for (Long id : ids) {
                ps.setLong(i++, id);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    running.put(rs.getLong(1), new long[] {rs.getLong(2), rs.getBoolean(3) ? 1 : 0});
                }
            }
        }
        List<Outcome> held = new ArrayList<>(list.size());
        for (Outcome o : list) {
            // Only the attempt whose token the row holds settles: a stale attempt of the same task in
            // the batch, before or after it, finds another token and is left out.
            long[] row = running.get(o.task().id());
            if (row != null && row[0] == o.token()) {
                boolean cancelRequested = row[1] == 1;
                held.add(cancelRequested && o.cancelledInstead() != null ? o.cancelledInstead() : o);
            }
        }
        List<Attempts.Row> rows = new ArrayList<>(held.size());
        for (Map.Entry<Exit, List<Outcome>> group : byExit(held).entrySet()) {
            Exit exit = group.getKey();
            List<Outcome> these = group.getValue();
            String when = "(CASE id " + String.join(" ", Collections.nCopies(these.size(), "WHEN ? THEN ?")) + " END)";
            List<Object> args = new ArrayList<>(5 * these.size());
            for (Value v : exit.perRow()) {
                for (Outcome o : these) {
                    args.add(o.task().id());
                    args.add(v == Value.AFTER_BACKOFF ? o.backoffMs() : o.error());
                }
            }
            for (Outcome o : these) {
                args.add(o.task().id());
            }
            int n = update.leaving(exit, when, when)
                    .whereIn(TaskStatus.RUNNING)
                    .and("id IN (" + String.join(", ", Collections.nCopies(these.size(), "?")) + ")")
                    .run(c, args.toArray());
            if (n != these.size()) {
                throw new IllegalStateException("settled " + n + " of " + these.size() + " locked tasks");
            }
            for (Outcome o : these) {
                written.put(o.token(), exit.status());
                if (o.attempt() != null) {
                    rows.add(o.attempt());
                }
            }
        }
        rows.sort(Comparator.comparingLong(Attempts.Row::taskId));
        attempts.insertAll(c, rows);
    }

    /** @return {@code outcomes} grouped by exit, each group in the order given */
    private static Map<Exit, List<Outcome>> byExit(List<Outcome> outcomes) {
        Map<Exit, List<Outcome>> groups = new EnumMap<>(Exit.class);
        for (Outcome o : outcomes) {
            groups.computeIfAbsent(o.exit(), e -> new ArrayList<>()).add(o);
        }
        return groups;
    }

    /**
     * Settles {@code outcomes}, all of one exit, with the dialect's one statement ({@link
     * Dialect#settleManySql}), which also inserts their attempt rows.
     *
     * @return the fencing tokens of the attempts settled
     */
    private static Set<Long> inOneStatement(Connection c, String sql, List<Outcome> outcomes) throws SQLException {
        int n = outcomes.size();
        Long[] ids = new Long[n];
        Long[] tokens = new Long[n];
        Long[] backoffs = new Long[n];
        String[] errors = new String[n];
        Long[] durations = new Long[n];
        String[] workers = new String[n];
        String[] results = new String[n];
        String[] classes = new String[n];
        String[] messages = new String[n];
        // Each distinct stack trace is sent once, and each row gives its place in that list (1-based,
        // as SQL arrays; null without one): a failing dependency throws the same stack trace for
        // every task it fails, and the traces are most of the statement's bytes.
        Integer[] stackIndexes = new Integer[n];
        Map<String, Integer> distinctStacks = new LinkedHashMap<>();
        for (int k = 0; k < n; k++) {
            Outcome o = outcomes.get(k);
            Attempts.Row row = o.attempt();
            ids[k] = row.taskId();
            tokens[k] = row.fencingToken();
            backoffs[k] = o.exit().perRow().contains(Value.AFTER_BACKOFF) ? o.backoffMs() : null;
            errors[k] = o.error();
            durations[k] = row.durationMs();
            workers[k] = row.worker() == null ? "unknown" : row.worker();
            results[k] = row.outcome().name();
            classes[k] = row.errorClass();
            messages[k] = row.errorMessage();
            stackIndexes[k] = row.stackTrace() == null
                    ? null
                    : distinctStacks.computeIfAbsent(row.stackTrace(), trace -> distinctStacks.size() + 1);
        }
        Object[][] arrays = {
            ids,
            tokens,
            backoffs,
            errors,
            durations,
            workers,
            results,
            classes,
            messages,
            stackIndexes,
            distinctStacks.keySet().toArray(new String[0])
        };
        String[] types = {
            "bigint", "bigint", "bigint", "text", "bigint", "text", "text", "text", "text", "integer", "text"
        };
        Set<Long> settled = new java.util.HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < arrays.length; i++) {
                if (allNull(arrays[i])) {
                    ps.setNull(i + 1, Types.ARRAY);
                } else {
                    ps.setArray(i + 1, c.createArrayOf(types[i], arrays[i]));
                }
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    settled.add(rs.getLong(1));
                }
            }
        }
        return settled;
    }

    private static boolean allNull(Object[] values) {
        for (Object v : values) {
            if (v != null) {
                return false;
            }
        }
        return true;
    }

    private static boolean checked(int n, Task t) {
        return TaskUpdate.checked(n, "outcome of task " + t.id());
    }
}
