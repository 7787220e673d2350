package io.dbtasks.internal;

import io.dbtasks.AttemptOutcome;
import io.dbtasks.Task;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Settles an attempt: SUCCEEDED, retry (back to PENDING after a backoff), FAILED, CANCELLED, or
 * handed back on shutdown. Each is one {@link TaskUpdate} guarded by the lease ({@code id AND
 * lease_token AND RUNNING}) plus, in the same transaction, the attempt row. {@code false} or empty
 * means the guard matched 0 rows: the lease was lost, nothing was written, and the caller discards
 * the result.
 *
 * <p>A retry never undoes an operator's cancel request: an attempt that fails while {@code
 * cancel_requested} is set ends the task CANCELLED instead of sending it back to PENDING, whether or
 * not the worker had noticed the request yet.
 */
final class Completions {
    private final Jdbc jdbc;
    private final Dialect dialect;
    private final Attempts attempts;
    private final TaskUpdate succeed;
    private final TaskUpdate retry;
    private final TaskUpdate retryCancelled;
    private final TaskUpdate fail;
    private final TaskUpdate cancel;
    private final TaskUpdate handBack;
    private final TaskUpdate handBackCancelled;
    private final TaskUpdate update;

    Completions(Jdbc jdbc, Dialect dialect, Attempts attempts) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.attempts = attempts;
        TaskUpdate update = new TaskUpdate(dialect);
        this.update = update;
        String now = dialect.now();
        this.succeed = update.to(TaskStatus.SUCCEEDED).set("last_error = NULL");
        // Binds: [delay millis,] last error, id, token.
        this.retry = update.to(TaskStatus.PENDING)
                .set("run_at = " + dialect.nowPlusMillis() + ", last_error = ?")
                .held()
                .and("cancel_requested = FALSE");
        this.retryCancelled =
                update.to(TaskStatus.CANCELLED).set("last_error = ?").held().and("cancel_requested = TRUE");
        this.fail = update.to(TaskStatus.FAILED).set("last_error = ?").held();
        this.cancel = update.to(TaskStatus.CANCELLED).set("last_error = ?").held();
        // Binds: [last error,] id, token.
        this.handBack = update.to(TaskStatus.PENDING)
                .set("attempt = attempt - 1, run_at = " + now)
                .held()
                .and("cancel_requested = FALSE");
        this.handBackCancelled = update.to(TaskStatus.CANCELLED)
                .set("attempt = attempt - 1, last_error = ?")
                .held()
                .and("cancel_requested = TRUE");
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
     * @return {@code false} if the lease was lost (0 rows)
     */
    boolean succeedOn(Connection c, Task t, long durationMs) throws SQLException {
        if (!checked(succeed.held().run(c, t.id(), t.fencingToken()), t)) {
            return false;
        }
        attempts.insert(c, Attempts.Row.of(t, durationMs, AttemptOutcome.SUCCEEDED, null));
        return true;
    }

    /** A successful attempt waiting to be recorded. */
    record Success(Task task, long durationMs) {}

    /**
     * Records many successes in one transaction: a locking read of the tasks still RUNNING, whose
     * tokens are compared with the attempts' (the guard, evaluated under the row locks), one UPDATE
     * of those rows, and one multi-row INSERT of their attempts. An attempt whose lease was lost is
     * left out: nothing of it is written. Where the dialect has one statement for all of it, that.
     *
     * @return the fencing tokens of the attempts recorded
     */
    Set<Long> succeedAll(List<Success> batch) {
        String what = "Record " + batch.size() + " successful attempt(s)";
        // One statement needs no transaction around it: auto-commit saves the COMMIT's round trip.
        return Jdbc.retryingDeadlocks(() -> dialect.completeBatchSql().isPresent()
                ? jdbc.withConnection(what, c -> succeedAll(c, batch))
                : jdbc.inTransaction(what, c -> succeedAll(c, batch)));
    }

    /** {@link #succeedAll(List)} on the caller's open transaction {@code c}, without committing. */
    private Set<Long> succeedAll(Connection c, List<Success> batch) throws SQLException {
        Optional<String> oneStatement = dialect.completeBatchSql();
        if (oneStatement.isPresent()) {
            return succeedAllInOneStatement(c, oneStatement.get(), batch);
        }
        if (dialect.updateFinalTable()) {
            return succeedAllReadingBack(c, batch);
        }
        Map<Long, Success> byId = new HashMap<>();
        for (Success s : batch) {
            byId.put(s.task().id(), s);
        }
        String in = String.join(", ", Collections.nCopies(byId.size(), "?"));
        List<Success> held = new ArrayList<>(byId.size());
        try (PreparedStatement ps =
                c.prepareStatement(TaskUpdate.lockRunning(dialect, "id, lease_token", byId.size()))) {
            int i = 1;
            for (Long id : byId.keySet()) {
                ps.setLong(i++, id);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Success s = byId.get(rs.getLong(1));
                    if (s != null && s.task().fencingToken() == rs.getLong(2)) {
                        held.add(s);
                    }
                }
            }
        }
        if (held.isEmpty()) {
            return Set.of();
        }
        Object[] ids = new Object[held.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = held.get(i).task().id();
        }
        int n = succeed.whereIn(TaskStatus.RUNNING)
                .and("id IN (" + String.join(", ", Collections.nCopies(held.size(), "?")) + ")")
                .run(c, ids);
        if (n != held.size()) {
            throw new IllegalStateException("completed " + n + " of " + held.size() + " locked tasks");
        }
        List<Attempts.Row> rows = new ArrayList<>(held.size());
        Set<Long> tokens = new HashSet<>();
        for (Success s : held) {
            rows.add(Attempts.Row.of(s.task(), s.durationMs(), AttemptOutcome.SUCCEEDED, null));
            tokens.add(s.task().fencingToken());
        }
        attempts.insertAll(c, rows);
        return tokens;
    }

    /**
     * {@link #succeedAll} where an UPDATE's rows can be read back ({@link Dialect#updateFinalTable()}):
     * one guarded UPDATE of the batch whose changed ids come back, then the multi-row INSERT of their
     * attempts, without the locking read. The guard {@code id IN (ids) AND lease_token IN (tokens)}
     * matches exactly the rows whose token is their attempt's: fencing tokens are drawn from one
     * sequence, so a token in the batch names one claim of one task of the batch.
     */
    private Set<Long> succeedAllReadingBack(Connection c, List<Success> batch) throws SQLException {
        Map<Long, Success> byId = new HashMap<>();
        for (Success s : batch) {
            byId.put(s.task().id(), s);
        }
        String in = String.join(", ", Collections.nCopies(byId.size(), "?"));
        String update = succeed.whereIn(TaskStatus.RUNNING)
                .and("id IN (" + in + ")")
                .and("lease_token IN (" + in + ")")
                .sql();
        List<Attempts.Row> rows = new ArrayList<>(byId.size());
        Set<Long> tokens = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT id, lease_token FROM FINAL TABLE (" + update + ")")) {
            int i = 1;
            for (Success s : byId.values()) {
                ps.setLong(i++, s.task().id());
            }
            for (Success s : byId.values()) {
                ps.setLong(i++, s.task().fencingToken());
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Success s = byId.get(rs.getLong(1));
                    if (s == null || s.task().fencingToken() != rs.getLong(2)) {
                        throw new IllegalStateException(
                                "completed task " + rs.getLong(1) + " under a token not of this batch");
                    }
                    rows.add(Attempts.Row.of(s.task(), s.durationMs(), AttemptOutcome.SUCCEEDED, null));
                    tokens.add(s.task().fencingToken());
                }
            }
        }
        attempts.insertAll(c, rows);
        return tokens;
    }

    /** {@link #succeedAll} where the dialect completes and records a batch in one statement. */
    private static Set<Long> succeedAllInOneStatement(Connection c, String sql, List<Success> batch)
            throws SQLException {
        Long[] ids = new Long[batch.size()];
        Long[] tokens = new Long[batch.size()];
        Long[] durations = new Long[batch.size()];
        String[] workers = new String[batch.size()];
        for (int i = 0; i < batch.size(); i++) {
            Task t = batch.get(i).task();
            ids[i] = t.id();
            tokens[i] = t.fencingToken();
            durations[i] = batch.get(i).durationMs();
            workers[i] = t.leaseOwner() == null ? "unknown" : t.leaseOwner();
        }
        return longsOf(c, sql, new String[] {"bigint", "bigint", "bigint", "text"}, ids, tokens, durations, workers);
    }

    /**
     * A failed attempt waiting to be recorded.
     *
     * @param task the attempt's task, as claimed
     * @param outcome FAILED or TIMED_OUT
     * @param error what the handler threw, or the timeout
     * @param retryDelay the backoff before the retry, or {@code null} to end the task FAILED
     * @param durationMs how long the attempt ran
     */
    /**
     * A failed attempt to record.
     *
     * @param stackTrace {@code error}'s stack trace as stored ({@link Attempts#stackTrace}), rendered
     *     where the failure is created (the handler's thread), not on the one thread that writes
     *     outcomes; {@code null} without an error
     */
    record Failure(
            Task task,
            AttemptOutcome outcome,
            Throwable error,
            Duration retryDelay,
            long durationMs,
            String stackTrace) {
        Failure(Task task, AttemptOutcome outcome, Throwable error, Duration retryDelay, long durationMs) {
            this(task, outcome, error, retryDelay, durationMs, error == null ? null : Attempts.stackTrace(error));
        }

        /** @return its attempt row */
        Attempts.Row row() {
            return Attempts.Row.of(task, durationMs, outcome, error, stackTrace);
        }
    }

    /**
     * Records failed attempts in one transaction, in task id order: each a retry (back to PENDING,
     * due its delay after the database's now; CANCELLED instead if an operator asked to cancel the
     * task while the attempt ran) or FAILED, with its guarded UPDATE, and one multi-row INSERT of
     * their attempt rows. The retries' UPDATEs go as one JDBC batch and the FAILED ones as another
     * (one round trip each, where the driver reports each row count; else one by one), so a queue
     * where many attempts fail is written as fast as one where they succeed. An attempt whose lease
     * was lost is left out: nothing of it is written.
     *
     * @return the status written (PENDING, CANCELLED or FAILED) by fencing token; a token missing
     *     lost its lease
     */
    Map<Long, TaskStatus> settleFailures(List<Failure> batch) {
        return Jdbc.retryingDeadlocks(() ->
                jdbc.inTransaction("Record " + batch.size() + " failed attempt(s)", c -> settleFailures(c, batch)));
    }

    /** {@link #settleFailures(List)} on the caller's open transaction {@code c}, without committing. */
    private Map<Long, TaskStatus> settleFailures(Connection c, List<Failure> batch) throws SQLException {
        List<Failure> sorted = new ArrayList<>(batch);
        sorted.sort(java.util.Comparator.comparingLong(f -> f.task().id())); // one lock order for all writers
        List<Failure> retries = new ArrayList<>();
        List<Failure> failures = new ArrayList<>();
        for (Failure f : sorted) {
            (f.retryDelay() != null ? retries : failures).add(f);
        }
        Map<Long, TaskStatus> written = new HashMap<>();
        Optional<String> oneStatement = dialect.retryBatchSql();
        Set<Long> inOne = oneStatement.isPresent() && !retries.isEmpty()
                ? retryInOneStatement(c, oneStatement.get(), retries)
                : null;
        int[] retried = inOne != null
                ? retries.stream()
                        .mapToInt(f -> inOne.contains(f.task().fencingToken()) ? 1 : 0)
                        .toArray()
                : dialect.exactBatchCounts() || retries.size() < 2
                        ? run(c, retry, retries, f -> new Object[] {
                            f.retryDelay().toMillis(),
                            Attempts.reason(f.error()),
                            f.task().id(),
                            f.task().fencingToken()
                        })
                        : settleLocked(c, retries, true);
        int[] failed = dialect.exactBatchCounts() || failures.size() < 2
                ? run(c, fail, failures, f -> new Object[] {
                    Attempts.reason(f.error()), f.task().id(), f.task().fencingToken()
                })
                : settleLocked(c, failures, false);
        for (int k = 0; k < retries.size(); k++) {
            Failure f = retries.get(k);
            Task t = f.task();
            if (checked(retried[k], t)) {
                written.put(t.fencingToken(), TaskStatus.PENDING);
            } else if (checked(
                    retryCancelled.run(
                            c,
                            "Cancelled by an operator; the attempt failed with " + Attempts.reason(f.error()),
                            t.id(),
                            t.fencingToken()),
                    t)) {
                written.put(t.fencingToken(), TaskStatus.CANCELLED);
            }
        }
        for (int k = 0; k < failures.size(); k++) {
            if (checked(failed[k], failures.get(k).task())) {
                written.put(failures.get(k).task().fencingToken(), TaskStatus.FAILED);
            }
        }
        List<Attempts.Row> rows = new ArrayList<>(written.size());
        for (Failure f : sorted) {
            long token = f.task().fencingToken();
            if (written.containsKey(token) && (inOne == null || !inOne.contains(token))) {
                rows.add(f.row());
            }
        }
        attempts.insertAll(c, rows);
        return written;
    }

    /**
     * Retries {@code retries} with the dialect's one statement ({@link Dialect#retryBatchSql()}),
     * which also inserts their attempt rows.
     *
     * @return the fencing tokens of the retries written
     */
    private static Set<Long> retryInOneStatement(Connection c, String sql, List<Failure> retries) throws SQLException {
        int n = retries.size();
        Long[] ids = new Long[n];
        Long[] tokens = new Long[n];
        Long[] delays = new Long[n];
        String[] reasons = new String[n];
        Long[] durations = new Long[n];
        String[] workers = new String[n];
        String[] outcomes = new String[n];
        String[] classes = new String[n];
        String[] messages = new String[n];
        // Each distinct stack trace is sent once, and each row gives its place in that list (1-based,
        // as SQL arrays; null without one): a failing dependency throws the same stack trace for
        // every task it fails, and the traces are most of the statement's bytes.
        Integer[] stackIndexes = new Integer[n];
        Map<String, Integer> distinctStacks = new java.util.LinkedHashMap<>();
        for (int k = 0; k < n; k++) {
            Failure f = retries.get(k);
            Attempts.Row row = f.row();
            ids[k] = row.taskId();
            tokens[k] = row.fencingToken();
            delays[k] = f.retryDelay().toMillis();
            reasons[k] = Attempts.reason(f.error());
            durations[k] = row.durationMs();
            workers[k] = row.worker() == null ? "unknown" : row.worker();
            outcomes[k] = row.outcome().name();
            classes[k] = row.errorClass();
            messages[k] = row.errorMessage();
            stackIndexes[k] = row.stackTrace() == null
                    ? null
                    : distinctStacks.computeIfAbsent(row.stackTrace(), trace -> distinctStacks.size() + 1);
        }
        return longsOf(
                c,
                sql,
                new String[] {
                    "bigint", "bigint", "bigint", "text", "bigint", "text", "text", "text", "text", "integer", "text"
                },
                ids,
                tokens,
                delays,
                reasons,
                durations,
                workers,
                outcomes,
                classes,
                messages,
                stackIndexes,
                distinctStacks.keySet().toArray(new String[0]));
    }

    /**
     * Runs {@code sql} with {@code arrays} bound in order as SQL arrays of {@code types}.
     *
     * @return the first column of every row it returns
     */
    private static Set<Long> longsOf(Connection c, String sql, String[] types, Object[]... arrays) throws SQLException {
        Set<Long> longs = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < arrays.length; i++) {
                ps.setArray(i + 1, c.createArrayOf(types[i], arrays[i]));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    longs.add(rs.getLong(1));
                }
            }
        }
        return longs;
    }

    /**
     * Settles many failures with one locking read and one UPDATE, where a JDBC batch would not report
     * each row count ({@link Dialect#exactBatchCounts()}) and so would cost a round trip per task (on
     * MariaDB, a queue where attempts fail once ran at a third of its success-only rate that way).
     * The read locks the RUNNING rows among them ({@code FOR UPDATE}, in key order) and the guard is
     * checked under those locks: the row's token must be the attempt's, and, for a retry, no cancel
     * may be requested (those get 0 here and are settled CANCELLED one by one, as elsewhere). The
     * UPDATE then writes each row's own backoff and error with {@code CASE id WHEN ... END}, and must
     * change exactly the rows held.
     *
     * @param c the open transaction
     * @param list the failures, each a task id at most once per token
     * @param retry {@code true}: back to PENDING after each one's delay; {@code false}: FAILED
     * @return 1 for each failure written, 0 for one not, in the order of {@code list}
     * @throws IllegalStateException if the UPDATE changed another number of rows than it locked
     */
    private int[] settleLocked(Connection c, List<Failure> list, boolean retry) throws SQLException {
        Map<Long, long[]> running = new HashMap<>(); // id -> {token, cancel requested ? 1 : 0}
        Set<Long> ids = new java.util.LinkedHashSet<>();
        for (Failure f : list) {
            ids.add(f.task().id());
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
        int[] counts = new int[list.size()];
        List<Failure> held = new ArrayList<>(list.size());
        for (int k = 0; k < counts.length; k++) {
            Failure f = list.get(k);
            long[] row = running.get(f.task().id());
            if (row != null && row[0] == f.task().fencingToken() && !(retry && row[1] == 1)) {
                counts[k] = 1;
                held.add(f);
            }
        }
        if (held.isEmpty()) {
            return counts;
        }
        String when = String.join(" ", Collections.nCopies(held.size(), "WHEN ? THEN ?"));
        String in = String.join(", ", Collections.nCopies(held.size(), "?"));
        List<Object> args = new ArrayList<>(5 * held.size());
        TaskUpdate many;
        if (retry) {
            // The dialect's "now plus ? ms", its one parameter the row's own delay.
            String delay = "(CASE id " + when + " END)";
            many = update.to(TaskStatus.PENDING)
                    .set("run_at = " + dialect.nowPlusMillis().replace("?", delay) + ", last_error = (CASE id " + when
                            + " END)")
                    .and("cancel_requested = FALSE");
            for (Failure f : held) {
                args.add(f.task().id());
                args.add(f.retryDelay().toMillis());
            }
        } else {
            many = update.to(TaskStatus.FAILED).set("last_error = (CASE id " + when + " END)");
        }
        for (Failure f : held) {
            args.add(f.task().id());
            args.add(Attempts.reason(f.error()));
        }
        for (Failure f : held) {
            args.add(f.task().id());
        }
        int n = many.whereIn(TaskStatus.RUNNING).and("id IN (" + in + ")").run(c, args.toArray());
        if (n != held.size()) {
            throw new IllegalStateException("settled " + n + " of " + held.size() + " locked tasks");
        }
        return counts;
    }

    /** Runs {@code update} once per failure, as one JDBC batch where the dialect allows; row counts in order. */
    private int[] run(
            Connection c,
            TaskUpdate update,
            List<Failure> failures,
            java.util.function.Function<Failure, Object[]> binds)
            throws SQLException {
        if (dialect.exactBatchCounts()) {
            List<Object[]> args = new ArrayList<>(failures.size());
            for (Failure f : failures) {
                args.add(binds.apply(f));
            }
            return update.runBatch(c, args);
        }
        int[] counts = new int[failures.size()];
        for (int k = 0; k < counts.length; k++) {
            counts[k] = update.run(c, binds.apply(failures.get(k)));
        }
        return counts;
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

    boolean cancelled(Task t, Throwable error, long durationMs) {
        return settle(
                t,
                cancel,
                "Cancelled by an operator while running",
                Attempts.Row.of(t, durationMs, AttemptOutcome.CANCELLED, error));
    }

    /**
     * Back to PENDING at once, giving back the attempt; no attempt row. CANCELLED instead if an
     * operator asked to cancel the task meanwhile (the request reaches the worker only with the next
     * heartbeat, so a task handed back before that would otherwise lose it).
     *
     * @return the status written (PENDING or CANCELLED), or empty if the lease was lost
     */
    Optional<TaskStatus> handBack(Task t) {
        return jdbc.inTransaction("Hand back task " + t.id(), c -> {
            if (checked(handBack.run(c, t.id(), t.fencingToken()), t)) {
                return Optional.of(TaskStatus.PENDING);
            }
            boolean cancelled = checked(
                    handBackCancelled.run(
                            c, "Cancelled by an operator; handed back before it finished", t.id(), t.fencingToken()),
                    t);
            return cancelled ? Optional.of(TaskStatus.CANCELLED) : Optional.empty();
        });
    }

    private boolean settle(Task t, TaskUpdate update, String lastError, Attempts.Row row) {
        return jdbc.inTransaction("Record outcome of task " + t.id(), c -> {
            if (!checked(update.run(c, lastError, t.id(), t.fencingToken()), t)) {
                return false;
            }
            attempts.insert(c, row);
            return true;
        });
    }

    private static boolean checked(int n, Task t) {
        return TaskUpdate.checked(n, "outcome of task " + t.id());
    }
}
