package io.dbtasks.spring.actuator;

import io.dbtasks.DbTasks;
import io.dbtasks.DbTasksHealth;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The {@code dbtasks} health indicator, from {@link DbTasks#health()} (no database call of its own,
 * so a health probe never queues behind the pool). DOWN when:
 *
 * <ul>
 *   <li>enqueueing or claiming does not work: its last call failed on the database, or a call has
 *       waited on it for over a second (a lock on the task table, an exhausted pool), whatever other
 *       unit of database work succeeds (see {@link DbTasksHealth#unavailable()});
 *   <li>the database is unreachable: the engine's last unit of database work failed;
 *   <li>the engine should run workers but a claim loop's thread died, or a loop has not gone round
 *       for {@code dbtasks.health.claim-loop-stall};
 *   <li>the rescue sweep has not completed for {@code dbtasks.health.rescue-stall}.
 * </ul>
 *
 * Details: the worker id, the consecutive failures and the last failure, claim loops alive, the
 * oldest claim loop round, the last rescue, and on PostgreSQL whether the LISTEN connection is up
 * (informational: without it workers fall back to polling). The last failure is shown as a
 * sanitized reason ({@link #sanitized}): its SQLState and what that class of state means, never the
 * database's own message, which can quote SQL, table names and the values of a request (the
 * application log has it whole). Thread-safe.
 */
public class DbTasksHealthIndicator extends AbstractHealthIndicator {
    private final DbTasks dbTasks;
    private final Duration claimLoopStall;
    private final Duration rescueStall;
    private final Clock clock;
    private final Instant createdAt;

    /**
     * @param dbTasks the engine; not {@code null}
     * @param claimLoopStall how long a claim loop may go without a round before the indicator is
     *     DOWN ({@code dbtasks.health.claim-loop-stall}); not {@code null}
     * @param rescueStall how long the rescue sweep may go without completing before the indicator is
     *     DOWN ({@code dbtasks.health.rescue-stall}); not {@code null}
     * @param clock the wall clock the engine's times are compared with; not {@code null}
     * @throws NullPointerException if an argument is {@code null}
     */
    public DbTasksHealthIndicator(DbTasks dbTasks, Duration claimLoopStall, Duration rescueStall, Clock clock) {
        super("dbtasks health check failed");
        this.dbTasks = Objects.requireNonNull(dbTasks, "dbTasks");
        this.claimLoopStall = Objects.requireNonNull(claimLoopStall, "claimLoopStall");
        this.rescueStall = Objects.requireNonNull(rescueStall, "rescueStall");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.createdAt = clock.instant();
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        DbTasksHealth h = dbTasks.health();
        Instant now = clock.instant();
        builder.withDetail("workerId", dbTasks.workerId())
                .withDetail("database", dbTasks.dialect())
                .withDetail("consecutiveFailures", h.consecutiveFailures());
        if (h.lastSuccessAt() != null) {
            builder.withDetail("lastSuccessAt", h.lastSuccessAt().toString());
        }
        if (h.lastFailure() != null) {
            builder.withDetail("lastFailure", sanitized(h.lastFailure()))
                    .withDetail("lastFailureAt", String.valueOf(h.lastFailureAt()));
        }
        builder.withDetail("workersStarted", h.workersStarted())
                .withDetail("claimLoops", h.claimLoops())
                .withDetail("claimLoopsAlive", h.claimLoopsAlive());
        if (h.oldestClaimLoopAt() != null) {
            builder.withDetail("oldestClaimLoopAt", h.oldestClaimLoopAt().toString());
        }
        if (h.lastRescueAt() != null) {
            builder.withDetail("lastRescueAt", h.lastRescueAt().toString());
        }
        if (h.listening() != null) {
            builder.withDetail("listening", h.listening());
        }
        String problem = problem(h, now);
        if (problem == null) {
            builder.up();
        } else {
            builder.down().withDetail("reason", problem);
        }
    }

    private String problem(DbTasksHealth h, Instant now) {
        String unavailable = h.unavailable();
        if (unavailable != null) {
            // "<what> failed last at <instant>: <database message>": the message is not for callers.
            int message = unavailable.indexOf(": ");
            return message < 0 ? unavailable : unavailable.substring(0, message) + ": " + sanitized(unavailable);
        }
        if (!h.healthy()) {
            return "the last " + h.consecutiveFailures() + " unit(s) of database work failed: "
                    + sanitized(h.lastFailure());
        }
        if (!h.workersStarted()) {
            return null; // producer only, or not started yet / stopping: nothing more to check
        }
        if (h.claimLoopsAlive() < h.claimLoops()) {
            return (h.claimLoops() - h.claimLoopsAlive()) + " of " + h.claimLoops() + " claim loop(s) stopped";
        }
        Duration stall = claimLoopStall;
        if (h.oldestClaimLoopAt() != null && h.oldestClaimLoopAt().plus(stall).isBefore(now)) {
            return "a claim loop has not gone round since " + h.oldestClaimLoopAt() + " (limit " + stall + ")";
        }
        Instant rescued = h.lastRescueAt() != null ? h.lastRescueAt() : createdAt;
        if (rescued.plus(rescueStall).isBefore(now)) {
            return "the rescue sweep has not completed since " + rescued + " (limit " + rescueStall + ")";
        }
        return null;
    }

    private static final Pattern SQL_STATE = Pattern.compile("\\(SQLState ([0-9A-Za-z]{5})\\)");

    /**
     * What a failure of the engine's database work may say in a health response: that it stalled
     * (longer than the statement timeout), or that a statement failed, with its SQLState and the
     * meaning of the state's class; nothing of the database's message.
     *
     * @param failure the engine's failure text ({@link DbTasksHealth#lastFailure()}), or {@code null}
     * @return the sanitized reason, or {@code null} for {@code null}
     */
    public static String sanitized(String failure) {
        if (failure == null) {
            return null;
        }
        if (failure.contains("stalled longer than statementTimeout")) {
            return "a database statement stalled longer than the statement timeout and was aborted;"
                    + " see the application log";
        }
        Matcher m = SQL_STATE.matcher(failure);
        if (!m.find()) {
            return "a unit of database work failed; see the application log";
        }
        String state = m.group(1).toUpperCase(Locale.ROOT);
        return "a database statement failed with SQLState " + state + " (" + stateClass(state)
                + "); see the application log";
    }

    private static String stateClass(String state) {
        return switch (state.substring(0, 2)) {
            case "08" -> "connection exception";
            case "0A" -> "feature not supported";
            case "22" -> "data exception";
            case "23" -> "integrity constraint violation";
            case "25" -> "invalid transaction state";
            case "28" -> "invalid authorization";
            case "40" -> "transaction rollback";
            case "42" -> "syntax error or access rule violation";
            case "53" -> "insufficient resources";
            case "54" -> "program limit exceeded";
            case "55" -> "object not in prerequisite state";
            case "57" -> "operator intervention";
            case "58" -> "system error";
            case "HY", "S1" -> "driver error";
            default -> "class " + state.substring(0, 2);
        };
    }
}
