package io.dbtasks.internal.schedule;

import io.dbtasks.Page;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.enqueue.TaskDefaults;
import io.dbtasks.internal.execution.HandlerRegistry;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.schedule.Schedule;
import io.dbtasks.schedule.ScheduleExistsException;
import io.dbtasks.schedule.ScheduleInfo;
import io.dbtasks.schedule.ScheduleNotFoundException;
import io.dbtasks.schedule.Schedules;
import io.dbtasks.schedule.Trigger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The schedules API on {@code dbtasks_schedule}. Every change is one transaction: a row is read
 * with a locking read, the new state computed, and written by an UPDATE guarded by the row's version
 * (0 rows = someone changed it in between, which the lock rules out, so it throws). Creating is an
 * insert-if-absent on the primary key. The next slot of a new or changed trigger is computed from
 * the database's now (or the injected clock), so a change applies from the trigger's next slot.
 */
public final class JdbcSchedules implements Schedules {
    private static final String COLUMNS = "trigger_type, cron, cron_syntax, zone, period_ms, task_kind, task_queue,"
            + " task_payload, task_priority, task_max_attempts, missed_slots, missed_slots_max, misfire_threshold_ms,"
            + " start_at, declared_in_code";

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final HandlerRegistry handlers;
    private final ScheduleRows rows;
    private final Clock clock;
    private final SchedulePoller poller;
    private final String nowSql;

    public JdbcSchedules(Jdbc jdbc, Dialect dialect, HandlerRegistry handlers, Clock clock, SchedulePoller poller) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.handlers = handlers;
        this.rows = new ScheduleRows(dialect);
        this.clock = clock;
        this.poller = poller;
        this.nowSql = "SELECT " + dialect.now() + " AS db_now";
    }

    @Override
    public ScheduleInfo create(Schedule schedule) {
        Objects.requireNonNull(schedule, "schedule");
        String payload = handlers.write(schedule.payload());
        jdbc.inTransaction("Creating schedule " + schedule.name(), c -> {
            if (!insert(c, schedule, payload, false)) {
                throw new ScheduleExistsException("Schedule '" + schedule.name()
                        + "' exists; update(schedule) changes it, save(schedule) creates or updates");
            }
            return null;
        });
        poller.wakeUp();
        return require(schedule.name());
    }

    @Override
    public ScheduleInfo update(Schedule schedule) {
        Objects.requireNonNull(schedule, "schedule");
        String payload = handlers.write(schedule.payload());
        jdbc.inTransaction("Updating schedule " + schedule.name(), c -> {
            if (!change(c, schedule, payload, null)) {
                throw notFound(schedule.name());
            }
            return null;
        });
        poller.wakeUp();
        return require(schedule.name());
    }

    @Override
    public ScheduleInfo save(Schedule schedule) {
        return save(schedule, false);
    }

    /**
     * Creates or updates a schedule; {@code declared} marks it as declared in code (a run-time {@link
     * #save} keeps the row's mark).
     */
    public ScheduleInfo save(Schedule schedule, boolean declared) {
        Objects.requireNonNull(schedule, "schedule");
        String payload = handlers.write(schedule.payload());
        jdbc.inTransaction("Saving schedule " + schedule.name(), c -> {
            if (!insert(c, schedule, payload, declared) && !change(c, schedule, payload, declared ? true : null)) {
                // Deleted between the insert and the read: insert again.
                insert(c, schedule, payload, declared);
            }
            return null;
        });
        poller.wakeUp();
        return require(schedule.name());
    }

    @Override
    public ScheduleInfo pause(String name) {
        io.dbtasks.StoredText.requireText("schedule name", Objects.requireNonNull(name, "name"));
        int n = jdbc.withConnection("Pausing schedule " + name, c -> {
            try (PreparedStatement ps =
                    c.prepareStatement("UPDATE dbtasks_schedule SET paused = TRUE, paused_reason = NULL,"
                            + " next_slot = NULL, version = version + 1, updated_at = " + dialect.now()
                            + " WHERE name = ? AND (paused = FALSE OR paused_reason IS NOT NULL)")) {
                ps.setString(1, name);
                return ps.executeUpdate();
            }
        });
        Jdbc.changedOne(n, "Pausing schedule " + name);
        return require(name);
    }

    @Override
    public ScheduleInfo resume(String name) {
        io.dbtasks.StoredText.requireText("schedule name", Objects.requireNonNull(name, "name"));
        jdbc.inTransaction("Resuming schedule " + name, c -> {
            Stored s = lock(c, name);
            if (s == null) {
                throw notFound(name);
            }
            if (!s.paused) {
                return null;
            }
            Instant now = now(c);
            Instant next = switch (s.trigger.type()) {
                case CRON -> s.trigger.nextSlot(now).orElse(null);
                case FIXED_RATE ->
                    s.lastSlot == null ? now : SlotPlanner.firstAtOrAfter(s.trigger, s.lastSlot, now.plusNanos(1));
                // Waits for its latest task, then runs a delay after it (see SchedulePoller).
                case FIXED_DELAY -> s.lastTaskKey == null ? now : null;
            };
            write(
                    c,
                    "paused = FALSE, paused_reason = NULL, next_slot = ?",
                    name,
                    s.version,
                    ps -> dialect.setInstant(ps, 1, next));
            return null;
        });
        poller.wakeUp();
        return require(name);
    }

    @Override
    public boolean delete(String name) {
        io.dbtasks.StoredText.requireText("schedule name", Objects.requireNonNull(name, "name"));
        int n = jdbc.withConnection("Deleting schedule " + name, c -> {
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_schedule WHERE name = ?")) {
                ps.setString(1, name);
                return ps.executeUpdate();
            }
        });
        return Jdbc.changedOne(n, "Deleting schedule " + name);
    }

    @Override
    public Optional<ScheduleInfo> find(String name) {
        io.dbtasks.StoredText.requireText("schedule name", name);
        if (name == null) {
            return Optional.empty();
        }
        return jdbc.withConnection("Reading schedule " + name, c -> {
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT " + ScheduleRows.INFO + ScheduleRows.FROM_WITH_TASK + " WHERE s.name = ?")) {
                ps.setString(1, name);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? Optional.of(rows.info(rs)) : Optional.empty();
                }
            }
        });
    }

    @Override
    public Page<ScheduleInfo> list(int page, int size) {
        if (page < 0) {
            throw new IllegalArgumentException("page must not be negative, got " + page);
        }
        if (size < 1 || size > 1000) {
            throw new IllegalArgumentException("size must be 1 to 1000, got " + size);
        }
        return jdbc.withConnection("Listing schedules", c -> {
            long total;
            try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM dbtasks_schedule");
                    ResultSet rs = ps.executeQuery()) {
                rs.next();
                total = rs.getLong(1);
            }
            List<ScheduleInfo> items = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement("SELECT " + ScheduleRows.INFO + ScheduleRows.FROM_WITH_TASK
                    + " ORDER BY s.name LIMIT ? OFFSET ?")) {
                ps.setInt(1, size);
                ps.setLong(2, (long) page * size);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        items.add(rows.info(rs));
                    }
                }
            }
            return new Page<>(items, page, size, total);
        });
    }

    @Override
    public int enqueueDue() {
        return poller.enqueueDue();
    }

    private ScheduleInfo require(String name) {
        return find(name).orElseThrow(() -> notFound(name));
    }

    private static ScheduleNotFoundException notFound(String name) {
        return new ScheduleNotFoundException(
                "No schedule named '" + name + "'; create(schedule) stores one, list(page, size) shows them");
    }

    /** @return the database's now, or the injected clock's */
    Instant now(Connection c) throws SQLException {
        if (clock != null) {
            return clock.instant();
        }
        try (PreparedStatement ps = c.prepareStatement(nowSql);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return dialect.getInstant(rs, "db_now");
        }
    }

    /** The first slot of a new or changed trigger, from now and the schedule's start. */
    static Instant firstSlot(Schedule schedule, Instant now) {
        Trigger trigger = schedule.trigger();
        Instant start = schedule.startAt();
        return switch (trigger.type()) {
            case CRON -> SlotPlanner.firstAtOrAfter(trigger, now, start != null && start.isAfter(now) ? start : now);
            case FIXED_RATE -> start == null ? now : SlotPlanner.firstAtOrAfter(trigger, start, now);
            case FIXED_DELAY -> start != null && start.isAfter(now) ? start : now;
        };
    }

    private boolean insert(Connection c, Schedule schedule, String payload, boolean declared) throws SQLException {
        Instant next = firstSlot(schedule, now(c).truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO dbtasks_schedule (name, " + COLUMNS
                + ", paused, next_slot, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                + " ?, ?, ?, ?, FALSE, ?, 1, " + dialect.now() + ", " + dialect.now() + ")"
                + dialect.onConflictDoNothing())) {
            ps.setString(1, schedule.name());
            int i = bindDefinition(ps, 2, schedule, payload, declared);
            dialect.setInstant(ps, i, next);
            return dialect.insertIfAbsent(ps);
        }
    }

    /**
     * Replaces the definition of the locked row. {@code declared}: the new mark, or {@code null} to
     * keep the row's.
     *
     * @return {@code false} if there is no such row
     */
    private boolean change(Connection c, Schedule schedule, String payload, Boolean declared) throws SQLException {
        Stored s = lock(c, schedule.name());
        if (s == null) {
            return false;
        }
        boolean mark = declared != null ? declared : s.declared;
        if (s.sameDefinition(schedule, payload, mark)) {
            return true;
        }
        boolean retime = !s.trigger.equals(schedule.trigger()) || !Objects.equals(s.startAt, schedule.startAt());
        Instant next = s.paused ? null : retime ? firstSlot(schedule, now(c)) : s.nextSlot;
        write(c, COLUMNS.replace(",", " = ?,") + " = ?, next_slot = ?", schedule.name(), s.version, ps -> {
            int i = bindDefinition(ps, 1, schedule, payload, mark);
            dialect.setInstant(ps, i, next);
        });
        return true;
    }

    private int bindDefinition(PreparedStatement ps, int i, Schedule s, String payload, boolean declared)
            throws SQLException {
        Trigger t = s.trigger();
        ps.setString(i++, t.type().name());
        ps.setString(i++, t.expression().orElse(null));
        ps.setString(i++, t.syntax().map(Enum::name).orElse(null));
        ps.setString(i++, t.zone().map(Object::toString).orElse(null));
        if (t.period().isPresent()) {
            ps.setLong(i++, t.period().get().toMillis());
        } else {
            ps.setNull(i++, Types.BIGINT);
        }
        ps.setString(i++, s.kind());
        ps.setString(i++, TaskDefaults.queue(s.options().queue()));
        ps.setString(i++, payload);
        ps.setInt(i++, s.priority());
        if (s.maxAttempts() != null) {
            ps.setInt(i++, s.maxAttempts());
        } else {
            ps.setNull(i++, Types.INTEGER);
        }
        ps.setString(i++, s.missedSlots().mode().name());
        ps.setInt(i++, s.missedSlots().max());
        ps.setLong(i++, s.misfireThreshold().toMillis());
        dialect.setInstant(ps, i++, s.startAt());
        ps.setBoolean(i++, declared);
        return i;
    }

    @FunctionalInterface
    private interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    /** A version-guarded UPDATE of one row: {@code set} binds its own parameters first. */
    private void write(Connection c, String set, String name, long version, Binder binder) throws SQLException {
        int params = (int) set.chars().filter(ch -> ch == '?').count();
        try (PreparedStatement ps = c.prepareStatement("UPDATE dbtasks_schedule SET " + set
                + ", version = version + 1, updated_at = " + dialect.now() + " WHERE name = ? AND version = ?")) {
            binder.bind(ps);
            ps.setString(params + 1, name);
            ps.setLong(params + 2, version);
            if (!Jdbc.changedOne(ps.executeUpdate(), "Changing schedule " + name)) {
                throw new IllegalStateException("Schedule " + name + " changed under a row lock; this is a bug");
            }
        }
    }

    /** The stored definition and state of a row, read with a row lock. */
    private record Stored(
            io.dbtasks.schedule.Trigger trigger,
            String kind,
            String queue,
            String payload,
            int priority,
            Integer maxAttempts,
            io.dbtasks.schedule.MissedSlots missedSlots,
            long thresholdMillis,
            Instant startAt,
            boolean declared,
            boolean paused,
            Instant nextSlot,
            Instant lastSlot,
            String lastTaskKey,
            long version) {
        boolean sameDefinition(Schedule s, String json, boolean mark) {
            return trigger.equals(s.trigger())
                    && kind.equals(s.kind())
                    && queue.equals(s.queue())
                    && Objects.equals(payload, json)
                    && priority == s.priority()
                    && Objects.equals(maxAttempts, s.maxAttempts())
                    && missedSlots.equals(s.missedSlots())
                    && thresholdMillis == s.misfireThreshold().toMillis()
                    && Objects.equals(startAt, s.startAt())
                    && declared == mark;
        }
    }

    private Stored lock(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT " + ScheduleRows.DEFINITION
                + " FROM dbtasks_schedule s WHERE s.name = ?" + dialect.forUpdate())) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                int attempts = rs.getInt("task_max_attempts");
                Integer maxAttempts = rs.wasNull() ? null : attempts;
                return new Stored(
                        rows.trigger(rs),
                        rs.getString("task_kind"),
                        rs.getString("task_queue"),
                        rs.getString("task_payload"),
                        rs.getInt("task_priority"),
                        maxAttempts,
                        rows.missedSlots(rs),
                        rs.getLong("misfire_threshold_ms"),
                        dialect.getInstant(rs, "start_at"),
                        rs.getBoolean("declared_in_code"),
                        rs.getBoolean("paused"),
                        dialect.getInstant(rs, "next_slot"),
                        dialect.getInstant(rs, "last_slot"),
                        rs.getString("last_task_key"),
                        rs.getLong("version"));
            }
        }
    }
}
