package io.dbtasks.server.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SeedJobsRetryTest {
    @Test
    void seedEnqueueIsRetriedWithBackoffUntilItSucceeds() {
        AtomicInteger calls = new AtomicInteger();
        List<Long> pauses = new ArrayList<>();
        int tries = SeedJobs.retryUntilDone(() -> calls.incrementAndGet() >= 7, pauses::add);
        assertThat(tries).isEqualTo(7);
        assertThat(calls).hasValue(7);
        assertThat(pauses).containsExactly(1000L, 2000L, 4000L, 8000L, 16000L, 30000L, 30000L);
    }
}
