package io.dbtasks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class TaskOptionsTest {

    @Test
    void copiesChangeOneFieldAndLeaveTheOriginalAsItWas() {
        TaskOptions base = TaskOptions.builder().queue("q").priority(2).build();
        TaskOptions copy = base.withMaxAttempts(5).withTimeout(Duration.ofSeconds(9));
        assertThat(base).isEqualTo(new TaskOptions("q", 2, null, null, null));
        assertThat(copy).isEqualTo(new TaskOptions("q", 2, 5, null, Duration.ofSeconds(9)));
        assertThat(copy.toBuilder().queue(null).build().queue()).isNull();
        assertThat(TaskOptions.builder().build()).isEqualTo(TaskOptions.DEFAULTS);
    }

    @Test
    void outOfRangeFieldsAreRefusedSayingWhatIsAllowed() {
        assertThatThrownBy(() -> TaskOptions.DEFAULTS.withMaxAttempts(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxAttempts must be at least 1");
        assertThatThrownBy(() -> TaskOptions.DEFAULTS.withTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("timeout must be positive");
        assertThatThrownBy(() -> TaskOptions.DEFAULTS.withQueue(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("queue must be 1 to");
        assertThatThrownBy(() -> TaskOptions.DEFAULTS.withQueue("q".repeat(TaskRequest.MAX_NAME_LENGTH + 1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theDefaultQueueAndAttemptsAreTheEnginesOwn() {
        assertThat(TaskRequest.DEFAULT_QUEUE).isEqualTo(TaskOptions.DEFAULT_QUEUE);
        assertThat(DbTasks.DEFAULT_QUEUE).isEqualTo(TaskOptions.DEFAULT_QUEUE);
        assertThat(DbTasks.DEFAULT_MAX_ATTEMPTS).isEqualTo(TaskOptions.DEFAULT_MAX_ATTEMPTS);
    }
}
