package io.dbtasks.internal.execution;

import io.dbtasks.Task;
import io.dbtasks.TaskStatus;
import io.dbtasks.internal.completion.AddedStep;
import io.dbtasks.internal.completion.Completions;
import io.dbtasks.internal.completion.OutcomeBatcher;
import io.dbtasks.internal.lease.Leases;
import io.dbtasks.internal.support.Jdbc;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Where an {@link Execution} sends what became of its attempt, and the few database calls it makes
 * while running: the outcome sink of one engine. Every write is guarded by the attempt's fencing
 * token (see {@link Completions} and {@link Leases}); a {@code false} or empty answer means the
 * lease was lost and nothing was written.
 *
 * <p>Thread-safety: called from handler threads, timers and the heartbeat; thread-safe.
 */
public final class Completer {
    private final Jdbc jdbc;
    private final Completions completions;
    private final Leases leases;
    private final OutcomeBatcher outcomes;

    public Completer(Jdbc jdbc, Completions completions, Leases leases, OutcomeBatcher outcomes) {
        this.jdbc = jdbc;
        this.completions = completions;
        this.leases = leases;
        this.outcomes = outcomes;
    }

    /** Queues a success for the batch writer; {@code recorded} is told later whether it landed. */
    void succeed(Task t, long durationMs, String result, List<AddedStep> added, Consumer<Boolean> recorded) {
        outcomes.submit(new Completions.Success(t, durationMs, result, added), recorded);
    }

    /** Queues a failed attempt (a retry or FAILED) for the batch writer; {@code done} is told later. */
    void fail(Completions.Failure failure, OutcomeBatcher.FailureDone done) {
        outcomes.submit(failure, done);
    }

    /** See {@link Completions#succeedOn}. */
    boolean succeedOn(
            Connection c, Task t, long durationMs, String result, List<AddedStep> added, java.util.Set<String> released)
            throws SQLException {
        return completions.succeedOn(c, t, durationMs, result, added, released);
    }

    /** Wakes the local workers of queues whose steps a committed settle released. */
    void wakeReleased(java.util.Set<String> queues) {
        completions.wakeReleased(queues);
    }

    /** See {@link Completions#cancelled}. */
    boolean cancelled(Task t, Throwable error, long durationMs) {
        return completions.cancelled(t, error, durationMs);
    }

    /** See {@link Completions#handBack}. */
    Optional<TaskStatus> handBack(Task t) {
        return completions.handBack(t);
    }

    /** @return whether {@code t}'s lease is still held, renewing it if so */
    boolean renew(Task t) {
        return leases.heartbeat(List.of(t)).isEmpty();
    }

    /**
     * Checks a step that {@code adder} adds to its workflow: its name is not taken, and each of
     * {@code downstream} is a WAITING step that depends on {@code adder}.
     *
     * @throws IllegalArgumentException if not
     */
    void checkAddedStep(Task adder, String step, List<String> downstream) {
        jdbc.withConnection("Check a step added by task " + adder.id(), c -> {
            try (java.sql.PreparedStatement ps =
                    c.prepareStatement("SELECT COUNT(*) FROM dbtasks_task WHERE workflow_id = ? AND step = ?")) {
                ps.setLong(1, adder.workflowId());
                ps.setString(2, step);
                try (java.sql.ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getLong(1) > 0) {
                        throw new IllegalArgumentException("Workflow " + adder.workflowId() + " has a step named '"
                                + step + "' already; step names must be unique");
                    }
                }
            }
            if (downstream.isEmpty()) {
                return null;
            }
            java.util.Set<String> waiting = new java.util.HashSet<>();
            try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT t.step FROM dbtasks_dependency d"
                    + " JOIN dbtasks_task t ON t.id = d.task_id WHERE d.depends_on = ? AND "
                    + io.dbtasks.internal.completion.TaskUpdate.is("t.status", TaskStatus.WAITING))) {
                ps.setLong(1, adder.id());
                try (java.sql.ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        waiting.add(rs.getString(1));
                    }
                }
            }
            for (String d : downstream) {
                if (!waiting.contains(d)) {
                    throw new IllegalArgumentException("Step '" + d + "' cannot wait for the added step '" + step
                            + "': it must be a WAITING step of the workflow that depends on the adding step (task "
                            + adder.id() + ")");
                }
            }
            return null;
        });
    }

    /** @return the results of the steps {@code taskId} depends on, by step name */
    java.util.Map<String, String> dependencyResults(long taskId) {
        return jdbc.withConnection("Read the dependency results of task " + taskId, c -> {
            java.util.Map<String, String> results = new java.util.HashMap<>();
            try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT t.step, t.result FROM dbtasks_dependency d"
                    + " JOIN dbtasks_task t ON t.id = d.depends_on WHERE d.task_id = ?")) {
                ps.setLong(1, taskId);
                try (java.sql.ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        results.put(rs.getString(1), rs.getString(2));
                    }
                }
            }
            return results;
        });
    }

    /**
     * Lends a connection to a transactional handler, like every engine connection: the statement
     * timeout bounds its statements and commit, and the outcome counts for health.
     */
    <T> T borrow(String what, Jdbc.Work<T> work) {
        return jdbc.borrow(what, work);
    }
}
