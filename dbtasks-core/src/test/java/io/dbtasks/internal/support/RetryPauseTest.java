package io.dbtasks.internal.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * The pause before work rolled back as a victim (SQLState class 40) runs again: random, so that two
 * transactions that conflicted do not meet again at once, and bounded, doubling per failed run.
 */
class RetryPauseTest {
    @Test
    void thePauseIsARandomShareOfABoundThatDoublesPerFailedRun() {
        assertThat(Jdbc.retryPauseMillis(1, 0.0)).isZero();
        assertThat(Jdbc.retryPauseMillis(1, 0.999)).isEqualTo(Jdbc.RETRY_PAUSE_MILLIS - 1);
        assertThat(Jdbc.retryPauseMillis(2, 0.999)).isEqualTo(2 * Jdbc.RETRY_PAUSE_MILLIS - 1);
        assertThat(Jdbc.retryPauseMillis(2, 0.5)).isEqualTo(Jdbc.RETRY_PAUSE_MILLIS);
        assertThat(Jdbc.retryPauseMillis(0, 0.999)).as("below 1 counts as 1").isEqualTo(Jdbc.RETRY_PAUSE_MILLIS - 1);
        assertThat(Jdbc.retryPauseMillis(Integer.MAX_VALUE, 0.999))
                .as("bounded however many runs failed")
                .isLessThan(Jdbc.RETRY_PAUSE_MILLIS << 11);
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            seen.add(Jdbc.retryPauseMillis(2, ThreadLocalRandom.current().nextDouble()));
        }
        assertThat(seen).as("pauses of 200 retries: jittered, not one value").hasSizeGreaterThan(5);
    }

    @Test
    void anInterruptEndsThePauseAndStaysSet() {
        Thread.currentThread().interrupt();
        long start = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            Jdbc.pauseBeforeRetry(3);
        }
        assertThat(Thread.interrupted()).isTrue();
        assertThat(System.nanoTime() - start).as("20 interrupted pauses").isLessThan(2_000_000_000L);
    }
}
