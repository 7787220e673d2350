package io.dbtasks.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Slot computation of triggers: the two cron dialects, daylight-saving time, validation. */
class TriggerTest {
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    /** A Monday. */
    private static final Instant MONDAY = Instant.parse("2026-11-23T00:00:00Z");

    private static DayOfWeek dayOf(Trigger t) {
        return t.nextSlot(MONDAY).orElseThrow().atZone(ZoneOffset.UTC).getDayOfWeek();
    }

    private static List<Instant> slots(Trigger t, Instant from, int n) {
        List<Instant> slots = new ArrayList<>();
        Instant s = from;
        for (int i = 0; i < n; i++) {
            s = t.nextSlot(s).orElseThrow();
            slots.add(s);
        }
        return slots;
    }

    @Test
    void dayOfWeekNumbersDifferBetweenSpringAndQuartz() {
        // Spring: 1 = Monday, 0 and 7 = Sunday. Quartz: 1 = Sunday, 2 = Monday.
        assertThat(dayOf(Trigger.cron("0 0 12 * * 1", CronSyntax.SPRING, ZoneOffset.UTC)))
                .isEqualTo(DayOfWeek.MONDAY);
        assertThat(dayOf(Trigger.cron("0 0 12 * * 0", CronSyntax.SPRING, ZoneOffset.UTC)))
                .isEqualTo(DayOfWeek.SUNDAY);
        assertThat(dayOf(Trigger.cron("0 0 12 * * 7", CronSyntax.SPRING, ZoneOffset.UTC)))
                .isEqualTo(DayOfWeek.SUNDAY);
        assertThat(dayOf(Trigger.cron("0 0 12 ? * 1", CronSyntax.QUARTZ, ZoneOffset.UTC)))
                .isEqualTo(DayOfWeek.SUNDAY);
        assertThat(dayOf(Trigger.cron("0 0 12 ? * 2", CronSyntax.QUARTZ, ZoneOffset.UTC)))
                .isEqualTo(DayOfWeek.MONDAY);
        // Names mean the same in both.
        assertThat(dayOf(Trigger.cron("0 0 12 ? * MON", CronSyntax.QUARTZ, ZoneOffset.UTC)))
                .isEqualTo(DayOfWeek.MONDAY);
        assertThat(dayOf(Trigger.cron("0 0 12 * * MON", CronSyntax.SPRING, ZoneOffset.UTC)))
                .isEqualTo(DayOfWeek.MONDAY);
    }

    @Test
    void questionMarkIsOptionalInSpringAndRequiredInQuartz() {
        assertThat(Trigger.cron("0 30 2 * * ?").nextSlot(MONDAY)).contains(Instant.parse("2026-11-23T02:30:00Z"));
        assertThatThrownBy(() -> Trigger.cron("0 30 2 * * *", CronSyntax.QUARTZ, ZoneOffset.UTC))
                .isInstanceOf(InvalidScheduleException.class)
                .hasMessageContaining("'0 30 2 * * *' in QUARTZ syntax")
                .hasMessageContaining("'?' in exactly one of day-of-month and day-of-week");
    }

    @Test
    void quartzTakesAYearFieldAndSpringTakesMacrosAndLastDay() {
        assertThat(Trigger.cron("0 0 0 1 1 ? 2030", CronSyntax.QUARTZ, ZoneOffset.UTC)
                        .nextSlot(MONDAY))
                .contains(Instant.parse("2030-01-01T00:00:00Z"));
        assertThat(Trigger.cron("@daily").nextSlot(MONDAY)).contains(Instant.parse("2026-11-24T00:00:00Z"));
        assertThat(Trigger.cron("0 0 0 L * *").nextSlot(MONDAY)).contains(Instant.parse("2026-11-30T00:00:00Z"));
    }

    @Test
    void badExpressionsSayWhatIsWrongAndHowToWriteIt() {
        assertThatThrownBy(() -> Trigger.cron("*/5 * * * *"))
                .isInstanceOf(InvalidScheduleException.class)
                .hasMessageContaining("'*/5 * * * *' in SPRING syntax")
                .hasMessageContaining("5-field Unix cron needs a leading seconds field");
        assertThatThrownBy(() -> Trigger.cron("0 61 * * * *"))
                .isInstanceOf(InvalidScheduleException.class)
                .hasMessageContaining("61");
        assertThatThrownBy(() -> Trigger.cron("0 0 0 30 2 ?"))
                .isInstanceOf(InvalidScheduleException.class)
                .hasMessageContaining("never fires");
        assertThatThrownBy(() -> Trigger.cron("", ZoneOffset.UTC))
                .isInstanceOf(InvalidScheduleException.class)
                .hasMessageContaining("1 to 200 characters");
        assertThatThrownBy(() -> Trigger.cron("0 * * * * *", CronSyntax.SPRING, "Mars/Olympus"))
                .isInstanceOf(InvalidScheduleException.class)
                .hasMessageContaining("Unknown time zone 'Mars/Olympus'");
        assertThatThrownBy(() -> Trigger.fixedRate(Duration.ZERO))
                .isInstanceOf(InvalidScheduleException.class)
                .hasMessageContaining("at least 1 ms");
        assertThatThrownBy(() -> MissedSlots.runEach(0))
                .isInstanceOf(InvalidScheduleException.class)
                .hasMessageContaining("skip()");
        assertThatThrownBy(
                        () -> Schedule.builder("x", Trigger.cron("0 * * * * *")).build())
                .isInstanceOf(InvalidScheduleException.class)
                .hasMessageContaining("task(kind)");
    }

    @Test
    void skippedLocalTimeFiresOnceAtTheEndOfTheGap() {
        Trigger daily = Trigger.cron("0 30 2 * * *", BERLIN);
        assertThat(slots(daily, Instant.parse("2026-03-27T12:00:00Z"), 4))
                .containsExactly(
                        Instant.parse("2026-03-28T01:30:00Z"),
                        Instant.parse("2026-03-29T01:00:00Z"), // 03:00 CEST: 02:30 does not exist
                        Instant.parse("2026-03-30T00:30:00Z"),
                        Instant.parse("2026-03-31T00:30:00Z"));
        Trigger everyMinute = Trigger.cron("0 * * * * *", BERLIN);
        assertThat(slots(everyMinute, Instant.parse("2026-03-29T00:58:00Z"), 3))
                .containsExactly(
                        Instant.parse("2026-03-29T00:59:00Z"), // 01:59 CET
                        Instant.parse("2026-03-29T01:00:00Z"), // 02:00..02:59 and 03:00 CEST: one slot
                        Instant.parse("2026-03-29T01:01:00Z"));
    }

    @Test
    void repeatedLocalTimeFiresOnceAtItsFirstOccurrence() {
        Trigger daily = Trigger.cron("0 30 2 * * *", BERLIN);
        assertThat(slots(daily, Instant.parse("2026-10-24T12:00:00Z"), 2))
                .containsExactly(Instant.parse("2026-10-25T00:30:00Z"), Instant.parse("2026-10-26T01:30:00Z"));
        Trigger everyHalfHour = Trigger.cron("0 0/30 * * * *", BERLIN);
        assertThat(slots(everyHalfHour, Instant.parse("2026-10-24T23:45:00Z"), 4))
                .containsExactly(
                        Instant.parse("2026-10-25T00:00:00Z"), // 02:00 CEST
                        Instant.parse("2026-10-25T00:30:00Z"), // 02:30 CEST
                        Instant.parse("2026-10-25T02:00:00Z"), // 03:00 CET; 02:00 and 02:30 CET skipped
                        Instant.parse("2026-10-25T02:30:00Z"));
        // From inside the repeated hour, the next slot is after it.
        assertThat(everyHalfHour.nextSlot(Instant.parse("2026-10-25T01:10:00Z")))
                .contains(Instant.parse("2026-10-25T02:00:00Z"));
        assertThat(everyHalfHour.previousSlot(Instant.parse("2026-10-25T02:00:00Z")))
                .contains(Instant.parse("2026-10-25T00:30:00Z"));
    }

    /**
     * Why slots are matched on wall-clock times: cron-utils 9.2.1's own zone handling drops the
     * skipped 02:30 of 29 March entirely and runs a repeated time twice. If an upgrade changes this,
     * this test says so (the wall-clock mapping above stays right either way).
     */
    @Test
    void cronUtilsOwnZoneHandlingDropsTheSkippedSlotAndRepeatsTheRepeatedOne() {
        ExecutionTime daily = ExecutionTime.forCron(
                new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING53)).parse("0 30 2 * * *"));
        ZonedDateTime march28 = daily.nextExecution(ZonedDateTime.of(2026, 3, 27, 12, 0, 0, 0, BERLIN))
                .orElseThrow();
        ZonedDateTime next = daily.nextExecution(march28).orElseThrow();
        assertThat(next.toLocalDate()).hasToString("2026-03-30");

        ExecutionTime every20 = ExecutionTime.forCron(
                new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING53)).parse("0 */20 * * * *"));
        List<Instant> autumn = new ArrayList<>();
        ZonedDateTime t = ZonedDateTime.of(2026, 10, 25, 1, 50, 0, 0, BERLIN);
        for (int i = 0; i < 6; i++) {
            t = every20.nextExecution(t).orElseThrow();
            autumn.add(t.toInstant());
        }
        assertThat(autumn).contains(Instant.parse("2026-10-25T00:20:00Z"), Instant.parse("2026-10-25T01:20:00Z"));
    }

    @Test
    void fixedRateAndDelayStepByTheirPeriod() {
        Trigger rate = Trigger.fixedRate(Duration.ofSeconds(10));
        assertThat(rate.nextSlot(MONDAY)).contains(MONDAY.plusSeconds(10));
        assertThat(rate.previousSlot(MONDAY)).contains(MONDAY.minusSeconds(10));
        assertThat(rate.zone()).isEmpty();
        assertThat(Trigger.fixedDelay(Duration.ofMillis(1500)).period()).contains(Duration.ofMillis(1500));
        assertThat(Trigger.cron("0 0 * * * *", BERLIN)).isEqualTo(Trigger.cron(" 0 0 * * * * ", BERLIN));
        assertThat(Trigger.cron("0 0 * * * *", BERLIN)).isNotEqualTo(Trigger.cron("0 0 * * * *"));
    }

    @Test
    void slotKeyNamesScheduleAndSlot() {
        assertThat(Schedule.slotKey("nightly", Instant.parse("2026-03-29T01:00:00Z")))
                .isEqualTo("schedule:nightly@2026-03-29T01:00:00Z");
        String longest = "n".repeat(Schedule.MAX_NAME_LENGTH);
        assertThat(Schedule.slotKey(longest, Instant.parse("2026-03-29T01:00:00.123Z")))
                .hasSizeLessThanOrEqualTo(io.dbtasks.TaskRequest.MAX_KEY_LENGTH);
    }
}
