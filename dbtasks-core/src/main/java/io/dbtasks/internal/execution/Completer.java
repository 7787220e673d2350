package io.dbtasks.internal.execution;

import io.dbtasks.Task;
import io.dbtasks.TaskStatus;
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
    void succeed(Task t, long durationMs, Consumer<Boolean> recorded) {
        outcomes.submit(new Completions.Success(t, durationMs), recorded);
    }

    /** Queues a failed attempt (a retry or FAILED) for the batch writer; {@code done} is told later. */
    void fail(Completions.Failure failure, OutcomeBatcher.FailureDone done) {
        outcomes.submit(failure, done);
    }

    /** See {@link Completions#succeedOn}. */
    boolean succeedOn(Connection c, Task t, long durationMs) throws SQLException {
        return completions.succeedOn(c, t, durationMs);
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
     * Lends a connection to a transactional handler, like every engine connection: the statement
     * timeout bounds its statements and commit, and the outcome counts for health.
     */
    <T> T borrow(String what, Jdbc.Work<T> work) {
        return jdbc.borrow(what, work);
    }
}
