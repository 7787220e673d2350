package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.Task;
import io.dbtasks.TaskRequest;
import io.dbtasks.testing.TestDatabase;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class PostgresEnqueueContractTest extends EnqueueContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    /**
     * A multi-row enqueue binds due times as seconds and microseconds since the epoch; a lone one
     * binds a timestamp. Both store the same instant, before 1970 and past year 9999 included (the
     * other databases' columns stop at 1970-2038 or 9999), rounded to the microsecond alike.
     */
    @Test
    void dueTimesOutsideTheUsualRangeAreStoredAlikeByLoneAndMultiRowEnqueues() {
        DbTasks tasks = producer();
        List<Instant> times = List.of(
                Instant.parse("1969-12-31T23:59:59.999999Z"),
                Instant.parse("1901-02-03T04:05:06.000001Z"),
                Instant.parse("+12345-06-07T08:09:10.123456Z"),
                Instant.parse("+123456-06-07T08:09:10.654321Z"),
                Instant.parse("2031-05-06T07:08:09.1234565Z"),
                Instant.parse("2031-05-06T07:08:09.9999997Z"));
        for (Instant at : times) {
            Task lone =
                    tasks.enqueue(TaskRequest.builder(KIND).runAt(at).build()).task();
            List<Task> many = tasks
                    .enqueueAll(List.of(
                            TaskRequest.builder(KIND).runAt(at).build(),
                            TaskRequest.builder(KIND).runAt(at).build()))
                    .stream()
                    .map(r -> r.task())
                    .toList();
            Instant stored = tasks.find(lone.id()).orElseThrow().runAt();
            assertThat(Math.abs(java.time.Duration.between(at, stored).toNanos()))
                    .as("%s stored as %s", at, stored)
                    .isLessThanOrEqualTo(500);
            for (Task t : many) {
                assertThat(tasks.find(t.id()).orElseThrow().runAt())
                        .as("%s in a multi-row enqueue", at)
                        .isEqualTo(stored);
                assertThat(t.runAt()).isEqualTo(stored);
            }
        }
    }
}
