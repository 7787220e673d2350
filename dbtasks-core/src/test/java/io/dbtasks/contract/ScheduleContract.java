package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskStatus;
import io.dbtasks.schedule.CronSyntax;
import io.dbtasks.schedule.MissedSlots;
import io.dbtasks.schedule.Schedule;
import io.dbtasks.schedule.ScheduleExistsException;
import io.dbtasks.schedule.ScheduleInfo;
import io.dbtasks.schedule.ScheduleNotFoundException;
import io.dbtasks.schedule.Trigger;
import io.dbtasks.testing.LogCapture;
import io.dbtasks.testing.MutableClock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
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

    @Test
    void threeEnginesMakeExactlyOneTaskPerSlotOverThirtySlotsWithOneStoppedHalfwayAndOneStartedLate() {
        // Real engines polling concurrently on the shared schedule clock, which the test moves one
        // second at a time: the slot tasks are counted, not the wall clock.
        Consumer<DbTasks.Builder> polling =
                b -> b.workers(false).migrate(false).scheduleClock(clock).schedulePollInterval(Duration.ofMillis(10));
        DbTasks a = engine(polling);
        DbTasks b = engine(polling);
        a.schedules()
                .create(Schedule.builder("every-second", Trigger.cron("* * * * * *"))
                        .task("tick")
                        .misfireThreshold(Duration.ofMinutes(5))
                        .build());
        a.start();
        b.start();
        DbTasks late = null;
        for (int second = 0; second < 30; second++) {
            if (second == 10) {
                late = engine(polling);
                late.start();
            }
            if (second == 15) {
                a.stop(Duration.ofSeconds(5));
            }
            Instant slot = T0.plusSeconds(second);
            clock.set(slot);
            eventually()
                    .alias("a task for slot " + slot)
                    .until(() -> slots("every-second").contains(slot));
        }
        a.schedules().pause("every-second");
        List<Instant> expected = new ArrayList<>();
        for (int second = 0; second < 30; second++) {
            expected.add(T0.plusSeconds(second));
        }
        assertThat(slots("every-second")).containsExactlyElementsOf(expected);
        assertThat(count("SELECT COUNT(DISTINCT idempotency_key) FROM dbtasks_task WHERE name = ?", "every-second"))
                .isEqualTo(30);
        assertThat(late.isRunning()).isTrue();
    }

    @Test
    void afterTwoMinutesOfDowntimeSkipRunsNoMissedSlotLatestRunsOneAndEachUpToThreeRunsThree() {
        DbTasks tasks = manual();
        tasks.schedules().create(every10s("skip", MissedSlots.skip()));
        tasks.schedules().create(every10s("latest", MissedSlots.runLatest()));
        tasks.schedules().create(every10s("each3", MissedSlots.runEach(3)));
        assertThat(tasks.schedules().enqueueDue()).isEqualTo(3); // slot T0 of each
        // Downtime: no engine polls from T0 until T0 + 2 min + 7 s. The slots T0+10s .. T0+120s
        // (12 of them) are all more than the 5 s threshold late.
        clock.set(T0.plusSeconds(127));
        tasks.schedules().enqueueDue();
        assertThat(slots("skip")).containsExactly(T0);
        assertThat(slots("latest")).containsExactly(T0, T0.plusSeconds(120));
        assertThat(slots("each3")).containsExactly(T0, T0.plusSeconds(100), T0.plusSeconds(110), T0.plusSeconds(120));
        for (String name : List.of("skip", "latest", "each3")) {
            assertThat(tasks.schedules().find(name).orElseThrow().nextSlot())
                    .as(name)
                    .isEqualTo(T0.plusSeconds(130));
        }
        // Back to normal: the next slot is on time for every policy.
        clock.set(T0.plusSeconds(131));
        assertThat(tasks.schedules().enqueueDue()).isEqualTo(3);
        assertThat(slots("skip")).containsExactly(T0, T0.plusSeconds(130));
    }

    /**
     * A one-second cron with the default 10 s misfire threshold, polled at T0, then 90 s with no
     * engine: the poll at T0 + 90 s finds the slots T0 + 1 s .. T0 + 90 s due, the oldest far more than
     * the threshold late, so the schedule misfired and its policy decides over all of them.
     */
    private List<Instant> afterNinetySecondsOfDowntime(String name, MissedSlots policy) {
        DbTasks tasks = manual();
        tasks.schedules()
                .create(Schedule.builder(name, Trigger.cron("* * * * * *"))
                        .task("tick")
                        .missedSlots(policy)
                        .build());
        assertThat(tasks.schedules().enqueueDue()).isEqualTo(1); // slot T0
        clock.set(T0.plusSeconds(90).plusMillis(400));
        tasks.schedules().enqueueDue();
        assertThat(tasks.schedules().find(name).orElseThrow().nextSlot())
                .as("the schedule goes on from the first slot after the poll")
                .isEqualTo(T0.plusSeconds(91));
        List<Instant> all = slots(name);
        assertThat(all.get(0)).isEqualTo(T0);
        // Back to normal: the next slot is on time and gets its task, whatever the policy.
        clock.set(T0.plusSeconds(91).plusMillis(100));
        assertThat(tasks.schedules().enqueueDue()).isEqualTo(1);
        assertThat(slots(name)).last().isEqualTo(T0.plusSeconds(91));
        return all.subList(1, all.size());
    }

    @Test
    void oneSecondCronAfterNinetySecondsOfDowntimeUnderRunLatestRunsExactlyTheLatestSlot() {
        assertThat(afterNinetySecondsOfDowntime("latest", MissedSlots.runLatest()))
                .containsExactly(T0.plusSeconds(90));
    }

    @Test
    void oneSecondCronAfterNinetySecondsOfDowntimeUnderSkipRunsNoneOfTheDowntimesSlots() {
        assertThat(afterNinetySecondsOfDowntime("skip", MissedSlots.skip())).isEmpty();
    }

    @Test
    void oneSecondCronAfterNinetySecondsOfDowntimeUnderRunEachFiveRunsTheLatestFive() {
        assertThat(afterNinetySecondsOfDowntime("each5", MissedSlots.runEach(5)))
                .containsExactly(
                        T0.plusSeconds(86),
                        T0.plusSeconds(87),
                        T0.plusSeconds(88),
                        T0.plusSeconds(89),
                        T0.plusSeconds(90));
    }

    @Test
    void oneSecondCronAfterNinetySecondsOfDowntimeUnderRunEachOfMoreThanMissedRunsEverySlot() {
        List<Instant> expected = new ArrayList<>();
        for (int s = 1; s <= 90; s++) {
            expected.add(T0.plusSeconds(s));
        }
        assertThat(afterNinetySecondsOfDowntime("each1000", MissedSlots.runEach(1000)))
                .containsExactlyElementsOf(expected);
    }

    @Test
    void slotsFoundDueWithinTheThresholdAreAllOnTimeWhateverThePolicy() {
        // A poll that comes 3 s late (a pause, a slow database) has not misfired: each slot runs.
        DbTasks tasks = manual();
        tasks.schedules()
                .create(Schedule.builder("hiccup", Trigger.cron("* * * * * *"))
                        .task("tick")
                        .missedSlots(MissedSlots.skip())
                        .build());
        tasks.schedules().enqueueDue();
        clock.set(T0.plusSeconds(3).plusMillis(200));
        assertThat(tasks.schedules().enqueueDue()).isEqualTo(3);
        assertThat(slots("hiccup")).containsExactly(T0, T0.plusSeconds(1), T0.plusSeconds(2), T0.plusSeconds(3));
    }

    @Test
    void handlerReadsItsSlotAndKeyUnchangedAfterItsLeaseWasRescued() throws Exception {
        record Seen(int attempt, java.util.Optional<Instant> slot, java.util.Optional<String> key, Instant runAt) {}
        List<Seen> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.CountDownLatch firstStarted = latch();
        DbTasks tasks = engine(b -> b.migrate(false)
                .scheduling(false)
                .scheduleClock(clock)
                .handler("slotted", Void.class, (ctx, p) -> {
                    seen.add(new Seen(ctx.attempt(), ctx.slot(), ctx.idempotencyKey(), ctx.runAt()));
                    if (ctx.attempt() == 1) {
                        firstStarted.countDown();
                        Thread.sleep(30_000); // until its lease is taken away
                    }
                }));
        tasks.schedules()
                .create(Schedule.builder("slotted", Trigger.cron("*/10 * * * * *"))
                        .task("slotted")
                        .build());
        assertThat(tasks.schedules().enqueueDue()).isEqualTo(1);
        long id = tasks.findByKey(Schedule.slotKey("slotted", T0)).orElseThrow().id();
        tasks.start();
        awaitLatch(firstStarted);
        expireLease(id);
        eventually().alias("the rescued slot task ran again").until(() -> seen.size() >= 2);
        assertThat(seen).allSatisfy(s -> {
            assertThat(s.slot()).as("attempt %d", s.attempt()).contains(T0);
            assertThat(s.key()).as("attempt %d", s.attempt()).contains(Schedule.slotKey("slotted", T0));
        });
        assertThat(seen.get(1).runAt())
                .as("run-at is the rescue's, not the slot")
                .isNotEqualTo(T0);
        assertThat(tasks.findByKey(Schedule.slotKey("slotted", T0))
                        .orElseThrow()
                        .attempt())
                .isEqualTo(2);
    }

    @Test
    void slotOfAKeyIsReadBackAndOtherKeysHaveNone() {
        assertThat(Schedule.slotOf(Schedule.slotKey("a@b", T0.plusMillis(5)))).contains(T0.plusMillis(5));
        assertThat(Schedule.slotOf("order:42")).isEmpty();
        assertThat(Schedule.slotOf("schedule:x@not-a-time")).isEmpty();
        assertThat(Schedule.slotOf(null)).isEmpty();
    }

    /** An engine of an application version: workers on, polling only when the test says. */
    private DbTasks version(Consumer<DbTasks.Builder> more) {
        return engine(b -> {
            b.migrate(false).scheduling(false).scheduleClock(clock).handler("other", Void.class, (ctx, p) -> {});
            more.accept(b);
        });
    }

    @Test
    void declaredScheduleWhoseCodeIsGoneIsPausedWithOneWarningAndNoTaskThenResumesWhenTheCodeReturns()
            throws Exception {
        Schedule report = Schedule.builder("report", Trigger.cron("*/10 * * * * *"))
                .task("report")
                .build();
        AtomicInteger ran = new AtomicInteger();
        // Version 1 of the application declares the schedule and handles its kind.
        DbTasks v1 = version(b -> b.schedule(report).handler("report", Void.class, (ctx, p) -> ran.incrementAndGet()));
        v1.start();
        assertThat(v1.schedules().enqueueDue()).isEqualTo(1); // slot T0
        eventually().alias("slot T0 ran").until(() -> ran.get() == 1);
        v1.stop(Duration.ofSeconds(5));

        // Version 2 has neither: two instances run for a while past several slots.
        try (LogCapture logs = LogCapture.of("io.dbtasks.internal.schedule.HeldSchedules")) {
            DbTasks v2a = version(b -> {});
            DbTasks v2b = version(b -> {});
            v2a.start();
            v2b.start();
            for (int s = 10; s <= 90; s += 10) {
                clock.set(T0.plusSeconds(s).plusMillis(500));
                v2a.schedules().enqueueDue();
                v2b.schedules().enqueueDue();
            }
            Thread.sleep(500); // the workers' claims
            ScheduleInfo held = v2a.schedules().find("report").orElseThrow();
            assertThat(held.paused()).as("paused while no engine declares it").isTrue();
            assertThat(slots("report")).containsExactly(T0);
            assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'FAILED'"))
                    .isZero();
            assertThat(logs.messages())
                    .as("one warning across the instances and polls")
                    .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
                    .contains("Schedule 'report'")
                    .contains("dbTasks.schedules().delete(\"report\")");
            v2a.stop(Duration.ofSeconds(5));
            v2b.stop(Duration.ofSeconds(5));
        }

        // Version 3 brings the code back: the schedule resumes, and the slots missed meanwhile follow
        // its policy (runLatest: the latest, T0 + 100 s).
        clock.set(T0.plusSeconds(100).plusMillis(500));
        DbTasks v3 = version(b -> b.schedule(report).handler("report", Void.class, (ctx, p) -> ran.incrementAndGet()));
        v3.start();
        assertThat(v3.schedules().enqueueDue()).isEqualTo(1);
        eventually().alias("the resumed slot ran").until(() -> ran.get() == 2);
        ScheduleInfo resumed = v3.schedules().find("report").orElseThrow();
        assertThat(resumed.paused()).isFalse();
        assertThat(resumed.nextSlot()).isEqualTo(T0.plusSeconds(110));
        assertThat(slots("report")).containsExactly(T0, T0.plusSeconds(100));
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task WHERE status = 'FAILED'"))
                .isZero();
    }

    @Test
    void aScheduleDeclaredOnOneEngineIsFiredByAnotherThatHandlesItsKind() throws Exception {
        Schedule report = Schedule.builder("report", Trigger.cron("*/10 * * * * *"))
                .task("report")
                .build();
        AtomicInteger ran = new AtomicInteger();
        // A front end declares the schedule and never polls; a worker handles its kind and polls.
        DbTasks front = version(b -> b.schedule(report).workers(false));
        front.start();
        DbTasks worker = version(b -> b.handler("report", Void.class, (ctx, p) -> ran.incrementAndGet()));
        worker.start();
        for (int s = 0; s <= 60; s += 10) {
            clock.set(T0.plusSeconds(s).plusMillis(500));
            worker.schedules().enqueueDue();
        }
        eventually().alias("every slot ran on the worker").until(() -> ran.get() == 7);
        assertThat(worker.schedules().find("report").orElseThrow().paused())
                .as("not held: an engine handles its kind")
                .isFalse();
        assertThat(slots("report")).hasSize(7);
    }

    @Test
    void anOperatorsPauseOfAHeldScheduleIsKeptWhenItsCodeReturns() {
        Schedule report = Schedule.builder("report", Trigger.cron("*/10 * * * * *"))
                .task("report")
                .build();
        manual(b -> b.schedule(report)).start();
        DbTasks other = manual();
        clock.set(T0.plusSeconds(40));
        other.schedules().enqueueDue();
        assertThat(other.schedules().find("report").orElseThrow().paused()).isTrue();
        other.schedules().pause("report"); // the operator's pause replaces the hold
        clock.set(T0.plusSeconds(50));
        DbTasks back = manual(b -> b.schedule(report));
        back.start();
        back.schedules().enqueueDue();
        assertThat(back.schedules().find("report").orElseThrow().paused()).isTrue();
        assertThat(back.schedules().resume("report").paused()).isFalse();
    }

    @Test
    void downtimeOfAFixedRateFollowsThePolicyToo() {
        DbTasks tasks = manual();
        tasks.schedules()
                .create(Schedule.builder("rate", Trigger.fixedRate(Duration.ofSeconds(10)))
                        .task("tick")
                        .startAt(T0)
                        .missedSlots(MissedSlots.runEach(3))
                        .misfireThreshold(Duration.ofSeconds(5))
                        .build());
        tasks.schedules().enqueueDue();
        clock.set(T0.plusSeconds(127));
        tasks.schedules().enqueueDue();
        assertThat(slots("rate")).containsExactly(T0, T0.plusSeconds(100), T0.plusSeconds(110), T0.plusSeconds(120));
        assertThat(tasks.schedules().find("rate").orElseThrow().nextSlot()).isEqualTo(T0.plusSeconds(130));
    }

    /** Steps the clock from {@code from} to {@code to} by {@code step}, polling at each step. */
    private void drive(DbTasks tasks, Instant from, Instant to, Duration step) {
        for (Instant t = from; !t.isAfter(to); t = t.plus(step)) {
            clock.set(t);
            tasks.schedules().enqueueDue();
        }
    }

    @Test
    void dailyAt0230BerlinFiresOnceEachDayAcrossBoth2026Transitions() {
        ZoneId berlin = ZoneId.of("Europe/Berlin");
        clock.set(Instant.parse("2026-03-27T12:00:00Z"));
        DbTasks tasks = manual();
        for (CronSyntax syntax : CronSyntax.values()) {
            String expression = syntax == CronSyntax.SPRING ? "0 30 2 * * *" : "0 30 2 * * ?";
            tasks.schedules()
                    .create(Schedule.builder("daily-" + syntax, Trigger.cron(expression, syntax, berlin))
                            .task("report")
                            .misfireThreshold(Duration.ofHours(2))
                            .build());
        }
        tasks.schedules()
                .create(Schedule.builder("every-20-min", Trigger.cron("0 */20 * * * *", berlin))
                        .task("report")
                        .misfireThreshold(Duration.ofHours(2))
                        .build());
        // Spring: 29 March 2026, 02:00 CET jumps to 03:00 CEST; 02:30 does not exist that day.
        drive(
                tasks,
                Instant.parse("2026-03-27T12:00:00Z"),
                Instant.parse("2026-03-31T12:00:00Z"),
                Duration.ofMinutes(30));
        for (CronSyntax syntax : CronSyntax.values()) {
            assertThat(slots("daily-" + syntax))
                    .as(syntax.name())
                    .containsExactly(
                            Instant.parse("2026-03-28T01:30:00Z"), // 02:30 CET
                            Instant.parse("2026-03-29T01:00:00Z"), // skipped 02:30 -> 03:00 CEST, once
                            Instant.parse("2026-03-30T00:30:00Z"), // 02:30 CEST
                            Instant.parse("2026-03-31T00:30:00Z"));
        }
        assertThat(slots("every-20-min"))
                .filteredOn(t -> t.isAfter(Instant.parse("2026-03-29T00:30:00Z"))
                        && t.isBefore(Instant.parse("2026-03-29T01:30:00Z")))
                .containsExactly(
                        Instant.parse("2026-03-29T00:40:00Z"), // 01:40 CET
                        Instant.parse("2026-03-29T01:00:00Z"), // 02:00, 02:20, 02:40 skipped -> 03:00 CEST, once
                        Instant.parse("2026-03-29T01:20:00Z")); // 03:20 CEST
        tasks.schedules().pause("every-20-min");

        // Autumn: 25 October 2026, 03:00 CEST goes back to 02:00 CET; 02:30 happens twice.
        clock.set(Instant.parse("2026-10-23T12:00:00Z"));
        tasks.schedules().resume("every-20-min");
        for (CronSyntax syntax : CronSyntax.values()) {
            tasks.schedules().pause("daily-" + syntax);
            tasks.schedules().resume("daily-" + syntax);
        }
        drive(
                tasks,
                Instant.parse("2026-10-23T12:00:00Z"),
                Instant.parse("2026-10-27T12:00:00Z"),
                Duration.ofMinutes(30));
        for (CronSyntax syntax : CronSyntax.values()) {
            assertThat(slots("daily-" + syntax))
                    .as(syntax.name())
                    .filteredOn(t -> t.isAfter(Instant.parse("2026-10-01T00:00:00Z")))
                    .containsExactly(
                            Instant.parse("2026-10-24T00:30:00Z"), // 02:30 CEST
                            Instant.parse("2026-10-25T00:30:00Z"), // first 02:30 (CEST) only
                            Instant.parse("2026-10-26T01:30:00Z"), // 02:30 CET
                            Instant.parse("2026-10-27T01:30:00Z"));
        }
        assertThat(slots("every-20-min"))
                .filteredOn(t -> t.isAfter(Instant.parse("2026-10-24T23:30:00Z"))
                        && t.isBefore(Instant.parse("2026-10-25T02:30:00Z")))
                .containsExactly(
                        Instant.parse("2026-10-24T23:40:00Z"), // 01:40 CEST
                        Instant.parse("2026-10-25T00:00:00Z"), // 02:00 CEST
                        Instant.parse("2026-10-25T00:20:00Z"),
                        Instant.parse("2026-10-25T00:40:00Z"), // 02:40 CEST; the repeated 02:xx CET do not fire
                        Instant.parse("2026-10-25T02:00:00Z"), // 03:00 CET
                        Instant.parse("2026-10-25T02:20:00Z"));
    }

    @Test
    void cronChangedAtRunTimeTakesEffectAtTheNextSlotOnEveryEngine() {
        Consumer<DbTasks.Builder> polling =
                b -> b.workers(false).migrate(false).scheduleClock(clock).schedulePollInterval(Duration.ofMillis(10));
        DbTasks a = engine(polling);
        DbTasks b = engine(polling);
        DbTasks c = engine(polling);
        a.schedules()
                .create(Schedule.builder("changing", Trigger.cron("0 * * * * *"))
                        .task("tick")
                        .misfireThreshold(Duration.ofMinutes(5))
                        .build());
        a.start();
        b.start();
        c.start();
        eventually().until(() -> slots("changing").equals(List.of(T0)));
        clock.set(T0.plusSeconds(2));
        // Changed through engine a, which then stops: b and c learn of it only from the row.
        ScheduleInfo changed = a.schedules()
                .update(Schedule.builder("changing", Trigger.cron("*/5 * * * * *"))
                        .task("tick")
                        .misfireThreshold(Duration.ofMinutes(5))
                        .build());
        assertThat(changed.nextSlot()).isEqualTo(T0.plusSeconds(5));
        a.stop(Duration.ofSeconds(5));
        for (int s = 3; s <= 20; s++) {
            clock.set(T0.plusSeconds(s));
            if (s % 5 == 0) {
                Instant slot = T0.plusSeconds(s);
                eventually().alias("slot " + slot).until(() -> slots("changing").contains(slot));
            }
        }
        b.schedules().pause("changing");
        assertThat(slots("changing"))
                .containsExactly(T0, T0.plusSeconds(5), T0.plusSeconds(10), T0.plusSeconds(15), T0.plusSeconds(20));
        assertThat(b.schedules().find("changing").orElseThrow().trigger()).isEqualTo(Trigger.cron("*/5 * * * * *"));
    }

    @Test
    void pausedScheduleEnqueuesNothingResumeContinuesFromNowAndDeleteStopsIt() {
        DbTasks tasks = manual();
        tasks.schedules().create(every10s("p", MissedSlots.runEach(100)));
        tasks.schedules().enqueueDue();
        ScheduleInfo paused = tasks.schedules().pause("p");
        assertThat(paused.paused()).isTrue();
        assertThat(paused.nextSlot()).isNull();
        assertThat(tasks.schedules().pause("p").version()).isEqualTo(paused.version()); // no change
        clock.set(T0.plusSeconds(65));
        assertThat(tasks.schedules().enqueueDue()).isZero();
        ScheduleInfo resumed = tasks.schedules().resume("p");
        assertThat(resumed.paused()).isFalse();
        assertThat(resumed.nextSlot()).isEqualTo(T0.plusSeconds(70)); // the pause's slots are not "missed"
        clock.set(T0.plusSeconds(70));
        assertThat(tasks.schedules().enqueueDue()).isEqualTo(1);
        assertThat(slots("p")).containsExactly(T0, T0.plusSeconds(70));
        assertThat(tasks.schedules().delete("p")).isTrue();
        assertThat(tasks.schedules().delete("p")).isFalse();
        assertThat(tasks.schedules().find("p")).isEmpty();
        clock.set(T0.plusSeconds(90));
        assertThat(tasks.schedules().enqueueDue()).isZero();
        assertThat(slots("p")).hasSize(2); // its tasks stay
        assertThatThrownBy(() -> tasks.schedules().pause("p"))
                .isInstanceOf(ScheduleNotFoundException.class)
                .hasMessageContaining("'p'");
        assertThatThrownBy(() -> tasks.schedules().resume("p")).isInstanceOf(ScheduleNotFoundException.class);
        assertThatThrownBy(() -> tasks.schedules().update(every10s("p", MissedSlots.skip())))
                .isInstanceOf(ScheduleNotFoundException.class);
    }

    @Test
    void createTwiceFailsAndSaveLeavesAnUnchangedScheduleAlone() {
        DbTasks tasks = manual();
        ScheduleInfo first = tasks.schedules().create(every10s("dup", MissedSlots.skip()));
        assertThatThrownBy(() -> tasks.schedules().create(every10s("dup", MissedSlots.skip())))
                .isInstanceOf(ScheduleExistsException.class)
                .hasMessageContaining("update(schedule)");
        clock.set(T0.plusSeconds(3));
        assertThat(tasks.schedules().save(every10s("dup", MissedSlots.skip())).version())
                .isEqualTo(first.version());
        ScheduleInfo changed = tasks.schedules().save(every10s("dup", MissedSlots.runEach(2)));
        assertThat(changed.version()).isGreaterThan(first.version());
        assertThat(changed.missedSlots()).isEqualTo(MissedSlots.runEach(2));
        assertThat(changed.nextSlot()).isEqualTo(T0); // same trigger: next slot kept
        assertThat(tasks.schedules().list(0, 10).items())
                .extracting(ScheduleInfo::name)
                .containsExactly("dup");
    }

    @Test
    void scheduleDeclaredInCodeIsStoredAtStartAndUpdatedWhenItsCronChanges() {
        Schedule v1 = Schedule.builder("declared", Trigger.cron("0 0 * * * *"))
                .task("tick")
                .build();
        DbTasks first = manual(b -> b.schedule(v1));
        assertThat(first.schedules().find("declared")).isEmpty(); // stored at start, not at build
        first.start();
        ScheduleInfo stored = first.schedules().find("declared").orElseThrow();
        assertThat(stored.declaredInCode()).isTrue();
        assertThat(stored.nextSlot()).isEqualTo(T0);
        first.stop(Duration.ofSeconds(5));

        clock.set(T0.plusSeconds(30));
        manual(b -> b.schedule(v1)).start(); // same definition: untouched, T0 is still due
        assertThat(manualFind("declared").version()).isEqualTo(stored.version());
        assertThat(manualFind("declared").nextSlot()).isEqualTo(T0);

        Schedule v2 = Schedule.builder("declared", Trigger.cron("0 */15 * * * *"))
                .task("tick")
                .build();
        manual(b -> b.schedule(v2)).start();
        ScheduleInfo updated = manualFind("declared");
        assertThat(updated.trigger()).isEqualTo(v2.trigger());
        assertThat(updated.nextSlot()).isEqualTo(T0.plusSeconds(15 * 60));
    }

    private ScheduleInfo manualFind(String name) {
        return engines.get(0).schedules().find(name).orElseThrow();
    }

    @Test
    void fixedDelaySlotComesTheDelayAfterThePreviousTaskFinishedAndOutcomeIsShown() {
        DbTasks tasks = engine(b -> b.migrate(false)
                .schedulePollInterval(Duration.ofMillis(20))
                .handler("slow", Void.class, (ctx, p) -> Thread.sleep(150)));
        tasks.schedules()
                .create(Schedule.builder("delay", Trigger.fixedDelay(Duration.ofMillis(300)))
                        .task("slow")
                        .build());
        tasks.start();
        eventually()
                .alias("three slot tasks succeeded")
                .until(() -> count("SELECT COUNT(*) FROM dbtasks_task WHERE name = ? AND status = 'SUCCEEDED'", "delay")
                        >= 3);
        tasks.schedules().pause("delay");
        List<io.dbtasks.Task> done = tasks.list(io.dbtasks.TaskFilter.ALL, 0, 100).items().stream()
                .filter(t -> "delay".equals(t.name()) && t.status() == TaskStatus.SUCCEEDED)
                .sorted(java.util.Comparator.comparing(io.dbtasks.Task::runAt))
                .toList();
        for (int i = 1; i < done.size(); i++) {
            Instant previousEnd = done.get(i - 1).finishedAt();
            assertThat(done.get(i).runAt())
                    .as("slot %d is 300 ms after task %d ended", i, i - 1)
                    .isAfterOrEqualTo(previousEnd.plusMillis(300).truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
        }
        eventually().until(() -> tasks.schedules().find("delay").orElseThrow().lastTaskStatus() != null);
        ScheduleInfo info = tasks.schedules().find("delay").orElseThrow();
        assertThat(info.lastTaskKey()).isEqualTo(Schedule.slotKey("delay", info.lastSlot()));
        eventually()
                .alias("the latest task's outcome")
                .until(() -> tasks.schedules().find("delay").orElseThrow().lastTaskStatus() == TaskStatus.SUCCEEDED);
    }

    @Test
    void cronOnTheDatabaseClockRunsItsTasksAndShowsTheOutcome() {
        DbTasks tasks = engine(b -> b.migrate(false)
                .schedulePollInterval(Duration.ofMillis(50))
                .handler("fails", Void.class, (ctx, p) -> {
                    throw new io.dbtasks.NonRetryableException("no");
                }));
        tasks.schedules().create(Schedule.of("db-clock", Trigger.cron("* * * * * *"), "fails"));
        tasks.start();
        eventually()
                .alias("a slot task of the database clock ran")
                .until(() -> tasks.schedules().find("db-clock").orElseThrow().lastTaskStatus() == TaskStatus.FAILED);
        ScheduleInfo info = tasks.schedules().find("db-clock").orElseThrow();
        assertThat(info.lastSlot().getNano()).isZero(); // a whole second
        assertThat(info.nextSlot()).isAfter(info.lastSlot());
    }

    @Test
    void rowWithAnInvalidCronIsPausedAndOthersKeepFiring() {
        DbTasks tasks = manual();
        tasks.schedules().create(every10s("good", MissedSlots.skip()));
        tasks.schedules().create(every10s("bad", MissedSlots.skip()));
        sql("UPDATE dbtasks_schedule SET cron = ? WHERE name = ?", "61 * * * * *", "bad");
        assertThat(tasks.schedules().enqueueDue()).isEqualTo(1);
        assertThat(slots("good")).containsExactly(T0);
        assertThat(count("SELECT COUNT(*) FROM dbtasks_schedule WHERE name = 'bad' AND paused = TRUE"))
                .isEqualTo(1);
    }

    @Test
    void slotWhoseTaskExistsGetsNoSecondTaskEvenIfItsRowIsRewound() {
        DbTasks tasks = manual();
        tasks.schedules().create(every10s("rewound", MissedSlots.runEach(10)));
        tasks.schedules().create(every10s("other", MissedSlots.runEach(10)));
        clock.set(T0.plusSeconds(20));
        assertThat(tasks.schedules().enqueueDue()).isEqualTo(6);
        // As a database restored from an older backup would: the row forgets its last three slots.
        sql("UPDATE dbtasks_schedule SET next_slot = ? WHERE name = ?", T0, "rewound");
        clock.set(T0.plusSeconds(30));
        assertThat(tasks.schedules().enqueueDue()).isEqualTo(2); // T0+30 of each; the rest exist
        List<Instant> expected = List.of(T0, T0.plusSeconds(10), T0.plusSeconds(20), T0.plusSeconds(30));
        assertThat(slots("rewound")).containsExactlyElementsOf(expected);
        assertThat(slots("other")).containsExactlyElementsOf(expected);
        assertThat(tasks.schedules().find("rewound").orElseThrow().nextSlot()).isEqualTo(T0.plusSeconds(40));
    }
}
