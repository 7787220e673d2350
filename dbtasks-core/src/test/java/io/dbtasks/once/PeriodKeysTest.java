package io.dbtasks.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class PeriodKeysTest {
    private static final Instant AT = Instant.parse("2026-11-22T23:37:12.345Z");

    @Test
    void dailyKeysNameTheCalendarDayOfTheGivenZone() {
        assertThat(PeriodKeys.daily("daily-report", LocalDate.of(2026, 11, 22))).isEqualTo("daily-report:2026-11-22");
        assertThat(PeriodKeys.daily("daily-report", AT, ZoneOffset.UTC)).isEqualTo("daily-report:2026-11-22");
        assertThat(PeriodKeys.daily("daily-report", AT, ZoneId.of("Asia/Shanghai")))
                .isEqualTo("daily-report:2026-11-23");
    }

    @Test
    void hourlyKeysNameTheClockHourOfTheGivenZone() {
        assertThat(PeriodKeys.hourly("sync", AT, ZoneOffset.UTC)).isEqualTo("sync:2026-11-22T23");
        assertThat(PeriodKeys.hourly("sync", AT, ZoneId.of("Asia/Kolkata"))).isEqualTo("sync:2026-11-23T05");
    }

    @Test
    void slotKeysUseTheGivenStartAndFixedRateSlotsRoundDown() {
        assertThat(PeriodKeys.slot("digest", Instant.parse("2026-11-22T14:05:00Z")))
                .isEqualTo("digest:2026-11-22T14:05:00Z");
        assertThat(PeriodKeys.every("digest", AT, Duration.ofMinutes(5))).isEqualTo("digest:2026-11-22T23:35:00Z");
        assertThat(PeriodKeys.every("digest", Instant.parse("2026-11-22T23:39:59.999Z"), Duration.ofMinutes(5)))
                .isEqualTo(PeriodKeys.every("digest", AT, Duration.ofMinutes(5)));
        assertThatThrownBy(() -> PeriodKeys.every("digest", AT, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
