package io.dbtasks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class TaskRequestTest {
    @Test
    void aRequestHasOneDueTimeRunAtOrRunAfterNotBoth() {
        Instant at = Instant.parse("2031-01-02T03:04:05Z");
        assertThatThrownBy(() -> TaskRequest.builder("k")
                        .runAt(at)
                        .runAfter(Duration.ofMinutes(5))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not both");
        assertThat(TaskRequest.builder("k").runAt(at).build().runAt()).isEqualTo(at);
        assertThat(TaskRequest.builder("k")
                        .runAfter(Duration.ofMinutes(5))
                        .build()
                        .runAfter())
                .isEqualTo(Duration.ofMinutes(5));
    }
}
