package io.dbtasks.limit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RateTest {
    @Test
    void aRateNeedsAtLeastOneStartAndAPeriodOfWholeMillisecondsFromOneMillisecond() {
        assertThatThrownBy(() -> new Rate(0, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("a rate allows at least 1 start per period, got 0");
        assertThatThrownBy(() -> new Rate(1, Duration.ofNanos(999_999)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a rate's period must be at least 1 ms, got PT0.000999999S");
        assertThatThrownBy(() -> new Rate(1, Duration.ZERO)).hasMessageContaining("at least 1 ms");
        assertThatThrownBy(() -> new Rate(1, Duration.ofMillis(-5))).hasMessageContaining("at least 1 ms");
        assertThatThrownBy(() -> new Rate(1, Duration.ofNanos(1_500_000))).hasMessageContaining("whole milliseconds");
        assertThatThrownBy(() -> new Rate(1, Duration.ofDays(400))).hasMessageContaining("at most");
        assertThatThrownBy(() -> new Rate(1, null)).isInstanceOf(NullPointerException.class);
        assertThat(new Rate(1, Duration.ofMillis(1)).periodMillis()).isEqualTo(1);
    }

    @Test
    void aRateReadsAsStartsPerPeriod() {
        assertThat(Rate.perSecond(10)).hasToString("10 starts per 1s");
        assertThat(new Rate(1, Duration.ofMillis(250))).hasToString("1 start per 250ms");
        assertThat(Rate.perMinute(3)).hasToString("3 starts per 1m");
        assertThat(new Rate(2, Duration.ofHours(1))).hasToString("2 starts per 1h");
        assertThat(new Rate(2, Duration.ofMillis(1500))).hasToString("2 starts per 1500ms");
    }

    @Test
    void aLimitMayHaveOnlyARateOrBoth() {
        Limit onlyRate = Limit.rate("q", "*", Rate.perSecond(5));
        assertThat(onlyRate.maxRunning()).isEqualTo(Limit.NO_MAX_RUNNING);
        assertThat(onlyRate.limitsRunning()).isFalse();
        Limit both = Limit.maxRunning("q", "k", 2).withRate(Rate.perSecond(5));
        assertThat(both.maxRunning()).isEqualTo(2);
        assertThat(both.rate()).isEqualTo(Rate.perSecond(5));
        assertThat(Limit.fifo("q", "k").withRate(Rate.perMinute(1)).fifo()).isTrue();
        assertThat(Limit.maxRunning("q", "k", 2).rate()).isNull();
    }
}
