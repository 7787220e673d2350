package io.dbtasks.internal.schedule;

import io.dbtasks.TaskStatus;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.schedule.CronSyntax;
import io.dbtasks.schedule.MissedSlots;
import io.dbtasks.schedule.ScheduleInfo;
import io.dbtasks.schedule.Trigger;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads {@code dbtasks_schedule} rows. Triggers are rebuilt from the row at every read (a changed
 * cron is seen at once); parsed cron expressions are cached by their text, syntax and zone, which
 * is safe because the parse of the same text never changes.
 */
final class ScheduleRows {
    /** The definition columns, in the order {@link #trigger} and {@link #info} read them. */
    static final String DEFINITION = "s.name, s.trigger_type, s.cron, s.cron_syntax, s.zone, s.period_ms, s.task_kind,"
            + " s.task_queue, s.task_payload, s.task_priority, s.task_max_attempts, s.missed_slots,"
            + " s.missed_slots_max, s.misfire_threshold_ms, s.start_at, s.paused, s.declared_in_code, s.next_slot,"
            + " s.last_slot, s.last_task_key, s.version, s.created_at, s.updated_at";

    /** Every column of {@link #info}: the definition and the latest task's id and status. */
    static final String INFO = DEFINITION + ", t.id AS last_task_id, t.status AS last_task_status";

    /** The join that finds each schedule's latest task by its slot key. */
    static final String FROM_WITH_TASK =
            " FROM dbtasks_schedule s LEFT JOIN dbtasks_task t ON t.idempotency_key = s.last_task_key";

    private static final int MAX_CACHED = 10_000;
    private static final Map<String, Trigger> CRONS = new ConcurrentHashMap<>();

    private final Dialect dialect;

    ScheduleRows(Dialect dialect) {
        this.dialect = dialect;
    }

    Trigger trigger(ResultSet rs) throws SQLException {
        Trigger.Type type = Trigger.Type.valueOf(rs.getString("trigger_type"));
        return switch (type) {
            case CRON ->
                cron(rs.getString("cron"), CronSyntax.valueOf(rs.getString("cron_syntax")), rs.getString("zone"));
            case FIXED_RATE -> Trigger.fixedRate(Duration.ofMillis(rs.getLong("period_ms")));
            case FIXED_DELAY -> Trigger.fixedDelay(Duration.ofMillis(rs.getLong("period_ms")));
        };
    }

    static Trigger cron(String expression, CronSyntax syntax, String zone) {
        String key = syntax + " " + zone + " " + expression;
        Trigger t = CRONS.get(key);
        if (t == null) {
            t = Trigger.cron(expression, syntax, ZoneId.of(zone));
            if (CRONS.size() >= MAX_CACHED) {
                CRONS.clear();
            }
            CRONS.put(key, t);
        }
        return t;
    }

    MissedSlots missedSlots(ResultSet rs) throws SQLException {
        return MissedSlots.of(MissedSlots.Mode.valueOf(rs.getString("missed_slots")), rs.getInt("missed_slots_max"));
    }

    ScheduleInfo info(ResultSet rs) throws SQLException {
        int maxAttempts = rs.getInt("task_max_attempts");
        Integer attempts = rs.wasNull() ? null : maxAttempts;
        long taskId = rs.getLong("last_task_id");
        Long lastTaskId = rs.wasNull() ? null : taskId;
        String status = rs.getString("last_task_status");
        return new ScheduleInfo(
                rs.getString("name"),
                trigger(rs),
                rs.getString("task_kind"),
                rs.getString("task_queue"),
                rs.getString("task_payload"),
                rs.getInt("task_priority"),
                attempts,
                missedSlots(rs),
                Duration.ofMillis(rs.getLong("misfire_threshold_ms")),
                rs.getBoolean("paused"),
                dialect.getInstant(rs, "next_slot"),
                dialect.getInstant(rs, "last_slot"),
                rs.getString("last_task_key"),
                lastTaskId,
                status == null ? null : TaskStatus.valueOf(status),
                rs.getBoolean("declared_in_code"),
                dialect.getInstant(rs, "created_at"),
                dialect.getInstant(rs, "updated_at"),
                rs.getLong("version"));
    }
}
