package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskQuery;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskSummary;
import io.dbtasks.testing.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A payload search on PostgreSQL with a GIN index on {@code (payload::jsonb)}: the containment
 * subquery the index serves finds what the path comparison alone finds, for text, numbers, booleans
 * and quoted text, and array paths (which containment cannot say) still match.
 */
class PostgresPayloadIndexSearchTest extends EngineHarness {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @AfterEach
    void dropIndex() {
        if (database().required()) {
            sql("DROP INDEX IF EXISTS dbtasks_task_payload_gin_test");
        }
    }

    record Order(long orderId, Map<String, String> customer, List<String> tags, boolean express, String note) {}

    private List<Long> search(DbTasks tasks, List<String> path, String value) {
        return tasks.searchSummaries(TaskQuery.builder().payload(path, value).build(), 100).items().stream()
                .map(TaskSummary::id)
                .toList();
    }

    @Test
    void theIndexedSearchFindsWhatTheUnindexedOneFinds() {
        DbTasks tasks = producer();
        List<TaskRequest> list = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            list.add(TaskRequest.builder("search.order")
                    .payload(new Order(i, Map.of("id", "c" + (i % 3)), List.of("t" + i), i % 2 == 0, "n\"" + i))
                    .build());
        }
        List<Long> ids = tasks.enqueueAll(list).stream().map(r -> r.task().id()).toList();
        List<List<Object>> cases = List.of(
                List.of(List.of("customer", "id"), "c1", List.of(ids.get(7), ids.get(4), ids.get(1))),
                List.of(List.of("orderId"), "5", List.of(ids.get(5))),
                List.of(List.of("express"), "false", List.of(ids.get(7), ids.get(5), ids.get(3), ids.get(1))),
                List.of(List.of("note"), "n\"3", List.of(ids.get(3))),
                List.of(List.of("tags", "0"), "t8", List.of(ids.get(8))),
                List.of(List.of("missing"), "1", List.of()));
        List<List<Long>> unindexed = new ArrayList<>();
        for (List<Object> c : cases) {
            @SuppressWarnings("unchecked")
            List<String> path = (List<String>) c.get(0);
            List<Long> found = search(tasks, path, (String) c.get(1));
            assertThat(found).as("without an index: " + c).isEqualTo(c.get(2));
            unindexed.add(found);
        }
        sql("CREATE INDEX dbtasks_task_payload_gin_test ON dbtasks_task USING gin ((payload::jsonb))");
        DbTasks indexed = producer(); // a new engine looks the index up afresh
        for (int i = 0; i < cases.size(); i++) {
            @SuppressWarnings("unchecked")
            List<String> path = (List<String>) cases.get(i).get(0);
            assertThat(search(indexed, path, (String) cases.get(i).get(1)))
                    .as("with a GIN index: " + cases.get(i))
                    .isEqualTo(unindexed.get(i));
        }
        assertThat(count("SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'dbtasks_task_payload_gin_test'"))
                .isEqualTo(1);
    }
}
