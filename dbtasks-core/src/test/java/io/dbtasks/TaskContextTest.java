package io.dbtasks;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.schedule.Schedule;
import java.time.Instant;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class TaskContextTest {
    private static final Instant SLOT = Instant.parse("2031-01-02T03:04:05.123Z");

    @Test
    void slotReadsTheScheduleSlotKeyAsScheduleSlotOfDoes() {
        for (String key : Arrays.asList(
                Schedule.slotKey("nightly", SLOT),
                Schedule.slotKey("a@b", SLOT),
                Schedule.slotKey("", SLOT),
                "schedule:nightly@2031-01-02T03:04:05Z",
                "schedule:nightly@not-an-instant",
                "schedule:nightly",
                "schedule:@2031-01-02T03:04:05Z",
                "schedule@2031-01-02T03:04:05Z",
                "order-42@2031-01-02T03:04:05Z",
                "",
                null)) {
            assertThat(withKey(key).slot()).as("key %s", key).isEqualTo(Schedule.slotOf(key));
        }
        assertThat(withKey(Schedule.slotKey("nightly", SLOT)).slot()).contains(SLOT);
        assertThat(withKey("order-42").slot()).isEmpty();
    }

    private static TaskContext withKey(String key) {
        return new TaskContext() {
            @Override
            public Optional<String> idempotencyKey() {
                return Optional.ofNullable(key);
            }

            @Override
            public long taskId() {
                return 1;
            }

            @Override
            public String kind() {
                return "k";
            }

            @Override
            public String queue() {
                return TaskRequest.DEFAULT_QUEUE;
            }

            @Override
            public int attempt() {
                return 1;
            }

            @Override
            public int maxAttempts() {
                return 1;
            }

            @Override
            public long fencingToken() {
                return 1;
            }

            @Override
            public String workerId() {
                return "w";
            }

            @Override
            public boolean isLeaseLost() {
                return false;
            }

            @Override
            public boolean isCancellationRequested() {
                return false;
            }

            @Override
            public void heartbeat() {}
        };
    }
}
