package io.dbtasks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.Test;

/** The backoff arithmetic of {@link RetryPolicy#delayAfter}, without a database. */
class RetryPolicyTest {
    private static final DoubleSupplier NEVER = () -> {
        throw new AssertionError("a policy without jitter must not draw a random number");
    };

    @Test
    void fixedWaitsTheSameEveryTimeAndDrawsNoRandomNumber() {
        RetryPolicy p = RetryPolicy.fixed(Duration.ofMillis(1500));
        for (int attempt = 1; attempt <= 20; attempt++) {
            assertThat(p.delayAfter(attempt, NEVER)).isEqualTo(Duration.ofMillis(1500));
        }
        assertThat(p.jitter()).isZero();
        assertThat(p.max()).isEqualTo(p.initial());
    }

    @Test
    void exponentialGrowsByTheMultiplierUntilTheCap() {
        RetryPolicy p = RetryPolicy.exponential(Duration.ofMillis(100), 3.0, Duration.ofSeconds(1), 0.0);
        assertThat(p.delayAfter(1, NEVER)).isEqualTo(Duration.ofMillis(100));
        assertThat(p.delayAfter(2, NEVER)).isEqualTo(Duration.ofMillis(300));
        assertThat(p.delayAfter(3, NEVER)).isEqualTo(Duration.ofMillis(900));
        assertThat(p.delayAfter(4, NEVER)).isEqualTo(Duration.ofSeconds(1));
        assertThat(p.delayAfter(5, NEVER)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void capHoldsForAttemptNumbersFarBeyondOverflow() {
        RetryPolicy p = RetryPolicy.exponential(Duration.ofSeconds(1), 10.0, Duration.ofMinutes(10), 0.0);
        assertThat(p.delayAfter(400, NEVER)).isEqualTo(Duration.ofMinutes(10)); // 10^399 is Infinity
        assertThat(p.delayAfter(Integer.MAX_VALUE, NEVER)).isEqualTo(Duration.ofMinutes(10));
    }

    @Test
    void attemptNumbersBelowOneWaitTheInitialDelay() {
        RetryPolicy p = RetryPolicy.exponential(Duration.ofMillis(250), 2.0, Duration.ofSeconds(10), 0.0);
        assertThat(p.delayAfter(0, NEVER)).isEqualTo(Duration.ofMillis(250));
        assertThat(p.delayAfter(-3, NEVER)).isEqualTo(Duration.ofMillis(250));
    }

    @Test
    void jitterTakesTheDrawnFractionOffTheWait() {
        RetryPolicy p = RetryPolicy.exponential(Duration.ofSeconds(1), 2.0, Duration.ofSeconds(60), 0.4);
        assertThat(p.delayAfter(1, () -> 0.0)).isEqualTo(Duration.ofMillis(1000));
        assertThat(p.delayAfter(1, () -> 0.5)).isEqualTo(Duration.ofMillis(800));
        assertThat(p.delayAfter(2, () -> 0.5)).isEqualTo(Duration.ofMillis(1600));
        assertThat(p.delayAfter(1, () -> Math.nextDown(1.0))).isEqualTo(Duration.ofMillis(600));
    }

    @Test
    void jitteredWaitsStayWithinTheirBoundsAndNeverExceedTheCap() {
        RetryPolicy p = RetryPolicy.exponential(Duration.ofMillis(100), 2.0, Duration.ofSeconds(5), 0.3);
        SplittableRandom random = new SplittableRandom(42);
        for (int attempt = 1; attempt <= 12; attempt++) {
            long wait = Math.min(5000, 100L << (attempt - 1));
            for (int i = 0; i < 200; i++) {
                Duration d = p.delayAfter(attempt, random::nextDouble);
                assertThat(d.toMillis()).isBetween(Math.round(wait * 0.7), wait);
                assertThat(d).isLessThanOrEqualTo(p.max());
            }
        }
    }

    @Test
    void fullJitterMayWaitAlmostNothingButNeverANegativeTime() {
        RetryPolicy p = RetryPolicy.exponential(Duration.ofSeconds(2), 2.0, Duration.ofSeconds(2), 1.0);
        assertThat(p.delayAfter(1, () -> Math.nextDown(1.0))).isEqualTo(Duration.ZERO);
        assertThat(p.delayAfter(1, () -> 0.25)).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void zeroDelayIsAllowed() {
        assertThat(RetryPolicy.fixed(Duration.ZERO).delayAfter(3, NEVER)).isZero();
    }

    @Test
    void outOfRangeSettingsAreRefused() {
        Duration s = Duration.ofSeconds(1);
        assertThatThrownBy(() -> RetryPolicy.fixed(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("initial");
        assertThatThrownBy(() -> RetryPolicy.exponential(s, 0.5, s, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("multiplier");
        assertThatThrownBy(() -> RetryPolicy.exponential(s, Double.NaN, s, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RetryPolicy.exponential(s, Double.POSITIVE_INFINITY, s, 0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RetryPolicy.exponential(s, 2, s, -0.1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("jitter");
        assertThatThrownBy(() -> RetryPolicy.exponential(s, 2, s, 1.5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RetryPolicy.exponential(s, 2, s, Double.NaN))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RetryPolicy.exponential(Duration.ofSeconds(2), 2, s, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("max");
        assertThatThrownBy(() -> RetryPolicy.fixed(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void storedColumnsRebuildAnEqualPolicy() {
        RetryPolicy p = RetryPolicy.exponential(Duration.ofMillis(750), 1.5, Duration.ofMinutes(3), 0.25);
        RetryPolicy back = RetryPolicy.of(p.backoff(), p.initial(), p.multiplier(), p.max(), p.jitter());
        assertThat(back).isEqualTo(p).hasSameHashCodeAs(p);
        assertThat(RetryPolicy.fixed(Duration.ofSeconds(1))).isNotEqualTo(RetryPolicy.fixed(Duration.ofSeconds(2)));
    }

    @Test
    void theDefaultIsExponentialFromOneSecondDoublingCappedAtTenMinutesWithTwentyPercentJitter() {
        RetryPolicy d = RetryPolicy.DEFAULT;
        assertThat(d.backoff()).isEqualTo(RetryPolicy.Backoff.EXPONENTIAL);
        assertThat(d.initial()).isEqualTo(Duration.ofSeconds(1));
        assertThat(d.multiplier()).isEqualTo(2.0);
        assertThat(d.max()).isEqualTo(Duration.ofMinutes(10));
        assertThat(d.jitter()).isEqualTo(0.2);
    }
}
