package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskStatus;
import io.dbtasks.schedule.MissedSlots;
import io.dbtasks.schedule.Schedule;
import io.dbtasks.schedule.ScheduleInfo;
import io.dbtasks.schedule.Trigger;
import io.dbtasks.testing.MutableClock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Recurring schedules on {@code dbtasks_schedule}; run once per database by the subclasses. Time is
 * driven by a {@link MutableClock} injected as the schedule clock wherever slots are counted, so no
 * test waits for wall-clock slots.
 */
public abstract class ScheduleContract extends EngineHarness {
    /** A whole minute, so every-N-seconds crons have a slot at it. */
    private static final Instant T0 = Instant.parse("2026-11-23T10:00:00Z");

    private final MutableClock clock = new MutableClock(T0);

    /** An engine with a schedule clock that polls only when the test says (enqueueDue). */
    private DbTasks manual(Consumer<DbTasks.Builder> more) {
        return engine(b -> {
            b.workers(false).migrate(false).scheduling(false).scheduleClock(clock);
            more.accept(b);
        });
    }

    private DbTasks manual() {
        return manual(b -> {});
    }

    /** The slots with a task of schedule {@code name}, oldest first (read from the task rows). */
    private List<Instant> slots(String name) {
        List<Instant> slots = new ArrayList<>();
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps =
                        c.prepareStatement("SELECT run_at FROM dbtasks_task WHERE name = ? ORDER BY run_at, id")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    slots.add(dialect().getInstant(rs, "run_at"));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return slots;
    }

    private static Schedule every10s(String name, MissedSlots policy) {
        return Schedule.builder(name, Trigger.cron("*/10 * * * * *"))
                .task("tick")
                .missedSlots(policy)
                .misfireThreshold(Duration.ofSeconds(5))
                .build();
    }

    @Test
    void createdScheduleFiresItsDueSlotOnceWithTheSlotKey() {
        DbTasks tasks = manual();
        ScheduleInfo info = tasks.schedules().create(every10s("s", MissedSlots.runLatest()));
        assertThat(info.nextSlot()).isEqualTo(T0);
        assertThat(info.paused()).isFalse();
        assertThat(info.lastSlot()).isNull();
        assertThat(tasks.schedules().enqueueDue()).isEqualTo(1);
        assertThat(tasks.schedules().enqueueDue()).isZero();
        assertThat(slots("s")).containsExactly(T0);
        ScheduleInfo after = tasks.schedules().find("s").orElseThrow();
        assertThat(after.lastSlot()).isEqualTo(T0);
        assertThat(after.nextSlot()).isEqualTo(T0.plusSeconds(10));
        assertThat(after.lastTaskKey()).isEqualTo(Schedule.slotKey("s", T0));
        assertThat(after.lastTaskStatus()).isEqualTo(TaskStatus.PENDING);
        assertThat(tasks.findByKey(Schedule.slotKey("s", T0))).hasValueSatisfying(t -> {
            assertThat(t.kind()).isEqualTo("tick");
            assertThat(t.runAt()).isEqualTo(T0);
        });
    }
}
