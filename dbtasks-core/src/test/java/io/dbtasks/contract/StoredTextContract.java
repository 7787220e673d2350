package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.DbTasksException;
import io.dbtasks.TaskRequest;
import io.dbtasks.batch.BatchRequest;
import io.dbtasks.job.JobDefinition;
import io.dbtasks.job.JobTarget;
import io.dbtasks.schedule.Schedule;
import io.dbtasks.schedule.Trigger;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * Text no database stores faithfully (NUL, a lone surrogate; a control character in a name) is
 * refused by every public API that takes a string, with an {@link IllegalArgumentException} naming
 * the field, before any statement: H2 does not store it, PostgreSQL never sees it. A value the
 * database itself refuses is the caller's mistake and leaves the engine's health as it was.
 */
public abstract class StoredTextContract extends EngineHarness {
    private static final List<String> BAD = List.of("a\u0000b", "x\ud800y", "x\udc00");

    @Test
    void textWithNulOrALoneSurrogateIsRefusedByEveryApiNamingTheField() {
        DbTasks tasks = producer();
        for (String bad : BAD) {
            Map<String, ThrowingCallable> calls = new LinkedHashMap<>();
            calls.put("kind", () -> tasks.enqueue(TaskRequest.of(bad, null)));
            calls.put(
                    "queue",
                    () -> tasks.enqueue(TaskRequest.builder("k").queue(bad).build()));
            calls.put(
                    "name",
                    () -> tasks.enqueue(TaskRequest.builder("k").name(bad).build()));
            calls.put(
                    "reference",
                    () -> tasks.enqueue(TaskRequest.builder("k").reference(bad).build()));
            calls.put(
                    "idempotencyKey",
                    () -> tasks.enqueue(
                            TaskRequest.builder("k").idempotencyKey(bad).build()));
            calls.put("idempotencyKey ", () -> tasks.findByKey(bad));
            calls.put("queue ", () -> tasks.pauseQueue(bad, "me"));
            calls.put("code", () -> tasks.jobs().create(job(bad, "order", "[]")));
            calls.put("businessType", () -> tasks.jobs().create(job("c", bad, "[]")));
            calls.put("arguments", () -> tasks.jobs().create(job("c", "order", "[\"" + bad + "\"]")));
            calls.put(
                    "description",
                    () -> tasks.jobs()
                            .create(job("c", "order", "[]").toBuilder()
                                    .description(bad)
                                    .build()));
            calls.put("codes[1]", () -> tasks.jobs().runCodes(List.of("ok", bad)));
            calls.put("code ", () -> tasks.jobs().find(bad));
            calls.put("businessType ", () -> tasks.jobs().runBusinessType(bad));
            calls.put(
                    "name ",
                    () -> tasks.batches()
                            .create(BatchRequest.builder("b", 1).name(bad).build()));
            calls.put(
                    "idempotencyKey  ",
                    () -> tasks.batches()
                            .create(BatchRequest.builder("b", 1)
                                    .idempotencyKey(bad)
                                    .build()));
            calls.put("run-once key", () -> tasks.guards().runOnce(bad, Duration.ofSeconds(5), lease -> {}));
            calls.put("messageId", () -> tasks.inbox().receive("c", bad, tx -> {}));
            calls.put("lock name", () -> tasks.locks().tryAcquire(bad, Duration.ofSeconds(5)));
            calls.put(
                    "schedule name",
                    () -> tasks.schedules()
                            .create(Schedule.builder(bad, Trigger.fixedRate(Duration.ofMinutes(1)))
                                    .task("k")
                                    .build()));
            calls.forEach((field, call) -> assertThatThrownBy(call)
                    .as("%s = %s", field, bad.replace("\0", "\\0"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + field.strip() + "'"));
        }
        assertThat(count("SELECT COUNT(*) FROM dbtasks_task")).isZero();
        assertThat(count("SELECT COUNT(*) FROM dbtasks_job")).isZero();
        assertThat(tasks.health().healthy()).isTrue();
    }

    @Test
    void aLineBreakOrOtherControlCharacterInANameIsRefused() {
        DbTasks tasks = producer();
        for (String bad : List.of("q\r\n2026-01-01 INFO forged", "q\tx", "q\u0085")) {
            assertThatThrownBy(() -> TaskRequest.builder("k").queue(bad).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'queue'")
                    .hasMessageContaining("control character");
            assertThatThrownBy(() -> tasks.pauseQueue(bad, "me"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'queue'");
            assertThatThrownBy(() -> tasks.jobs().create(job("c", bad, "[]")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'businessType'");
        }
        assertThat(tasks.pausedQueues()).isEmpty();
    }

    @Test
    void aValueTheDatabaseRefusesLeavesTheEngineHealthy() {
        DbTasks tasks = producer();
        tasks.pauseQueue("healthy", "me"); // one success, so health has a baseline
        assertThatThrownBy(() -> tasks.pauseQueue("q", "x".repeat(300))) // paused_by is VARCHAR(200)
                .isInstanceOf(DbTasksException.class)
                .hasMessageContaining("refused a value");
        assertThat(tasks.health().consecutiveFailures())
                .as("a value the database refused is not a failure of the database: %s", tasks.health())
                .isZero();
        assertThat(tasks.health().healthy()).isTrue();
    }

    private static JobDefinition job(String code, String businessType, String arguments) {
        return JobDefinition.builder(code)
                .business(businessType, null)
                .target(JobTarget.of("orderService", "syncOrder"))
                .arguments(arguments)
                .build();
    }
}
