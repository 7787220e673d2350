package io.dbtasks.spring;

import io.dbtasks.DbTasks;
import io.dbtasks.DbTasksHealth;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
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
 * (informational: without it workers fall back to polling). Thread-safe.
 */
public class DbTasksHealthIndicator extends AbstractHealthIndicator {
    private final DbTasks dbTasks;
    private final DbTasksProperties.Health limits;
    private final Clock clock;
    private final Instant createdAt;

    /**
     * @param dbTasks the engine
     * @param limits the stall limits
     * @param clock the wall clock the engine's times are compared with
     */
    public DbTasksHealthIndicator(DbTasks dbTasks, DbTasksProperties.Health limits, Clock clock) {
        super("dbtasks health check failed");
        this.dbTasks = dbTasks;
        this.limits = limits;
        this.clock = clock;
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
            builder.withDetail("lastFailure", h.lastFailure())
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
        if (h.unavailable() != null) {
            return h.unavailable();
        }
        if (!h.healthy()) {
            return "the last " + h.consecutiveFailures() + " unit(s) of database work failed: " + h.lastFailure();
        }
        if (!h.workersStarted()) {
            return null; // producer only, or not started yet / stopping: nothing more to check
        }
        if (h.claimLoopsAlive() < h.claimLoops()) {
            return (h.claimLoops() - h.claimLoopsAlive()) + " of " + h.claimLoops() + " claim loop(s) stopped";
        }
        Duration stall = limits.getClaimLoopStall();
        if (h.oldestClaimLoopAt() != null && h.oldestClaimLoopAt().plus(stall).isBefore(now)) {
            return "a claim loop has not gone round since " + h.oldestClaimLoopAt() + " (limit " + stall + ")";
        }
        Duration rescueStall = limits.getRescueStall();
        Instant rescued = h.lastRescueAt() != null ? h.lastRescueAt() : createdAt;
        if (rescued.plus(rescueStall).isBefore(now)) {
            return "the rescue sweep has not completed since " + rescued + " (limit " + rescueStall + ")";
        }
        return null;
    }
}
