package io.dbtasks.internal.once;

import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.once.RunOnceResult;
import io.dbtasks.once.RunOnceTarget;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guard rescue: runs again the run-once keys whose runner died, for the targets this engine
 * registers ({@link RunOnceTarget}). Every rescue interval it reads up to {@value #BATCH} RUNNING
 * guard rows whose lease has ended (by the database clock) and whose target is one of its own, and
 * for each asks {@link JdbcRunOnceGuards#rescue}, which takes the key over by compare-and-set on the
 * old token (so when several engines find the same row, one runs it) and runs the target's work
 * under the key, renewing its lease. The work runs on the rescue's own thread, one key at a time, so
 * a slow rescued run delays the next pass but never a task's heartbeat.
 *
 * <p>Started and stopped with the engine; does nothing when no target is registered.
 */
public final class GuardRescue {
    private static final Logger log = LoggerFactory.getLogger(GuardRescue.class);
    /** The most rows one pass reads. */
    static final int BATCH = 100;

    private final Jdbc jdbc;
    private final JdbcRunOnceGuards guards;
    private final Map<String, RunOnceTarget> targets;
    private final Duration interval;
    private final String candidatesSql;
    private ScheduledExecutorService executor;

    /**
     * @param jdbc the engine's connections
     * @param dialect the database's dialect
     * @param guards the guards whose rows are rescued
     * @param targets the registered targets by name; may be empty
     * @param interval how often to look, positive
     */
    public GuardRescue(
            Jdbc jdbc,
            Dialect dialect,
            JdbcRunOnceGuards guards,
            Map<String, RunOnceTarget> targets,
            Duration interval) {
        this.jdbc = jdbc;
        this.guards = guards;
        this.targets = Map.copyOf(targets);
        this.interval = interval;
        this.candidatesSql = targets.isEmpty()
                ? null
                : "SELECT once_key, target FROM dbtasks_once WHERE status = '" + JdbcRunOnceGuards.GuardStatus.RUNNING
                        + "' AND lease_expires_at <= " + dialect.now() + " AND target IN ("
                        + String.join(", ", Collections.nCopies(targets.size(), "?"))
                        + ") ORDER BY lease_expires_at LIMIT " + BATCH;
    }

    /** Starts the passes on a daemon thread; does nothing without targets. */
    public synchronized void start(String workerId) {
        if (targets.isEmpty() || executor != null) {
            return;
        }
        executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "dbtasks-guard-rescue-" + workerId);
            t.setDaemon(true);
            return t;
        });
        long every = interval.toMillis();
        executor.scheduleWithFixedDelay(this::pass, every, every, TimeUnit.MILLISECONDS);
    }

    /** Stops the passes, interrupting a rescued run in flight, and waits up to {@code timeout} for it. */
    public synchronized void stop(Duration timeout) {
        ScheduledExecutorService e = executor;
        if (e == null) {
            return;
        }
        e.shutdownNow();
        try {
            e.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
    }

    private void pass() {
        try {
            rescueDue();
        } catch (RuntimeException e) {
            log.warn("Rescuing run-once keys failed; retrying in {} ms: {}", interval.toMillis(), e.getMessage());
        }
    }

    /**
     * One pass: rescues every RUNNING key past its lease whose target this engine registers.
     *
     * @return how many keys this engine ran again
     */
    public int rescueDue() {
        if (targets.isEmpty()) {
            return 0;
        }
        record Candidate(String key, String target) {}
        List<Candidate> candidates = jdbc.withConnection("Finding run-once keys to rescue", c -> {
            List<Candidate> found = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(candidatesSql)) {
                int i = 1;
                for (String name : targets.keySet()) {
                    ps.setString(i++, name);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        found.add(new Candidate(rs.getString("once_key"), rs.getString("target")));
                    }
                }
            }
            return found;
        });
        int ran = 0;
        for (Candidate candidate : candidates) {
            if (Thread.currentThread().isInterrupted()) {
                break;
            }
            RunOnceResult r = guards.rescue(candidate.key(), targets.get(candidate.target()));
            if (r != null) {
                ran++;
            }
        }
        return ran;
    }
}
