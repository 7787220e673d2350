package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.Task;
import io.dbtasks.TaskIds;
import io.dbtasks.TaskQuery;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskSlice;
import io.dbtasks.TaskStatus;
import io.dbtasks.TaskSummary;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Keyset task search: pages across equal creation times, each of the ten filters alone and together,
 * the id walk and the count. Run once per database.
 */
public abstract class TaskSearchContract extends EngineHarness {
    record Order(long orderId, Map<String, String> customer, List<String> tags, boolean express) {}

    private DbTasks tasks;

    private List<Long> enqueue(int n, String queue, String kind) {
        List<TaskRequest> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(TaskRequest.builder(kind)
                    .queue(queue)
                    .reference("REF-" + queue + "-" + i)
                    .idempotencyKey(queue + "-key-" + i)
                    .payload(new Order(i, Map.of("id", "c" + (i % 3)), List.of("t" + i, "x"), i % 2 == 0))
                    .build());
        }
        return tasks.enqueueAll(list).stream().map(r -> r.task().id()).toList();
    }

    private static List<Long> newestFirst(List<Long> ids) {
        List<Long> l = new ArrayList<>(ids);
        Collections.reverse(l);
        return l;
    }

    private List<Long> ids(TaskQuery q) {
        return tasks.searchSummaries(q, 1000).items().stream()
                .map(TaskSummary::id)
                .toList();
    }

    private static TaskQuery.Builder q() {
        return TaskQuery.builder();
    }

    /** Every page of a search, following the cursors; each page at most {@code size} rows. */
    private <T> List<T> allPages(TaskQuery query, int size, Function<TaskQuery, TaskSlice<T>> search) {
        List<T> seen = new ArrayList<>();
        TaskQuery page = query;
        int pages = 0;
        while (page != null) {
            TaskSlice<T> slice = search.apply(page);
            assertThat(slice.items()).hasSizeLessThanOrEqualTo(size);
            assertThat(slice.scanLimited()).isFalse();
            seen.addAll(slice.items());
            page = slice.next() == null ? null : page.before(slice.next());
            assertThat(++pages).isLessThan(1000);
        }
        return seen;
    }

    @Test
    void keysetPagesCoverEveryTaskOnceNewestFirstAcrossEqualCreationTimes() {
        tasks = producer();
        List<Long> a = enqueue(23, "a", "search.order");
        enqueue(5, "b", "search.order");
        // Ties: every task of queue a created at the same instant.
        Instant tie = Instant.now().truncatedTo(ChronoUnit.SECONDS).minus(Duration.ofMinutes(10));
        sql("UPDATE dbtasks_task SET created_at = ? WHERE queue = 'a'", tie);

        for (int size : List.of(1, 7, 10, 23, 50)) {
            List<Long> seen = allPages(q().queue("a").build(), size, p -> tasks.searchSummaries(p, size)).stream()
                    .map(TaskSummary::id)
                    .toList();
            assertThat(seen).as("page size " + size).containsExactlyElementsOf(newestFirst(a));
        }
        // The same across the tie with a time range, and with full tasks.
        TaskQuery range = q().created(tie, tie.plusMillis(1)).build();
        List<Long> inRange = allPages(range, 4, p -> tasks.search(p, 4)).stream()
                .map(Task::id)
                .toList();
        assertThat(inRange).containsExactlyElementsOf(newestFirst(a));
        // The last full page says there is no next one.
        TaskSlice<TaskSummary> exact = tasks.searchSummaries(q().queue("b").build(), 5);
        assertThat(exact.items()).hasSize(5);
        assertThat(exact.next()).isNull();
    }

    @Test
    void eachFilterSelectsOnlyItsTasks() {
        tasks = producer();
        List<Long> f = enqueue(6, "f", "search.order");
        List<Long> g = enqueue(3, "g", "search.other");
        tasks.cancel(f.get(2));

        assertThat(ids(q().status(TaskStatus.CANCELLED).build())).containsExactly(f.get(2));
        assertThat(ids(q().status(TaskStatus.PENDING).queue("f").build()))
                .containsExactly(f.get(5), f.get(4), f.get(3), f.get(1), f.get(0));
        assertThat(ids(q().queue("g").build())).containsExactlyElementsOf(newestFirst(g));
        assertThat(ids(q().kind("search.other").build())).containsExactlyElementsOf(newestFirst(g));
        assertThat(ids(q().key("f-key-4").build())).containsExactly(f.get(4));
        assertThat(ids(q().reference("REF-f-5").build())).containsExactly(f.get(5));
        assertThat(ids(q().id(f.get(1)).build())).containsExactly(f.get(1));
        assertThat(ids(q().id(f.get(1)).queue("g").build())).isEmpty();

        Instant created = tasks.find(f.get(0)).orElseThrow().createdAt();
        assertThat(ids(q().queue("f")
                        .created(created.plus(Duration.ofHours(1)), null)
                        .build()))
                .isEmpty();
        assertThat(ids(q().queue("f")
                        .created(null, created.minus(Duration.ofHours(1)))
                        .build()))
                .isEmpty();
        assertThat(ids(q().queue("f")
                        .created(created.minus(Duration.ofHours(1)), created.plus(Duration.ofHours(1)))
                        .build()))
                .hasSize(6);
        // A task moved out of the range by its creation time only is left out.
        sql("UPDATE dbtasks_task SET created_at = ? WHERE id = ?", created.minus(Duration.ofHours(3)), f.get(3));
        assertThat(ids(q().queue("f")
                        .created(created.minus(Duration.ofHours(1)), null)
                        .build()))
                .doesNotContain(f.get(3))
                .hasSize(5);

        // Payload: nested field, number, boolean, array element, text; with other filters.
        assertThat(ids(q().queue("f").payload(List.of("customer", "id"), "c1").build()))
                .containsExactly(f.get(4), f.get(1));
        assertThat(ids(q().payload(List.of("orderId"), "2").queue("g").build())).containsExactly(g.get(2));
        assertThat(ids(q().payload(List.of("express"), "true")
                        .kind("search.other")
                        .build()))
                .containsExactly(g.get(2), g.get(0));
        assertThat(ids(q().payload(List.of("tags", "0"), "t5").build())).containsExactly(f.get(5));
        assertThat(ids(q().payload(List.of("missing", "field"), "1").build())).isEmpty();
        // Every filter at once.
        TaskQuery all = q().status(TaskStatus.PENDING)
                .queue("f")
                .kind("search.order")
                .key("f-key-4")
                .reference("REF-f-4")
                .created(created.minus(Duration.ofHours(1)), created.plus(Duration.ofHours(1)))
                .id(f.get(4))
                .payload(List.of("customer", "id"), "c1")
                .build();
        assertThat(ids(all)).containsExactly(f.get(4));
        assertThat(tasks.count(all)).isEqualTo(1);
    }

    /**
     * A reference and a payload value match as exact strings on every database: not by case, not
     * with trailing spaces, and a JSON null is no value.
     */
    @Test
    void referencesAndPayloadValuesMatchAsExactStrings() {
        tasks = producer();
        long upper = tasks.enqueue(TaskRequest.builder("search.exact")
                        .reference("Order-7")
                        .payload(Map.of("customer", "Acme"))
                        .build())
                .task()
                .id();
        long lower = tasks.enqueue(TaskRequest.builder("search.exact")
                        .reference("order-7")
                        .payload(Map.of("customer", "acme"))
                        .build())
                .task()
                .id();
        long padded = tasks.enqueue(TaskRequest.builder("search.exact")
                        .reference("Order-7 ")
                        .payload(Map.of("customer", "Acme "))
                        .build())
                .task()
                .id();
        Map<String, Object> nullCustomer = new java.util.HashMap<>();
        nullCustomer.put("customer", null);
        long none = tasks.enqueue(TaskRequest.builder("search.exact")
                        .payload(nullCustomer)
                        .build())
                .task()
                .id();

        assertThat(ids(q().reference("Order-7").build())).containsExactly(upper);
        assertThat(ids(q().reference("order-7").build())).containsExactly(lower);
        assertThat(ids(q().kind("search.exact")
                        .payload(List.of("customer"), "Acme")
                        .build()))
                .containsExactly(upper);
        assertThat(ids(q().kind("search.exact")
                        .payload(List.of("customer"), "Acme ")
                        .build()))
                .containsExactly(padded);
        assertThat(ids(q().kind("search.exact")
                        .payload(List.of("customer"), "null")
                        .build()))
                .as("task %d has a JSON null there, no value", none)
                .isEmpty();
    }

    /** A payload path may name a field that reads as an SQL word, such as {@code null}. */
    @Test
    void payloadPathFieldsNamedLikeSqlWordsAreFieldNames() {
        tasks = producer();
        long named = tasks.enqueue(TaskRequest.builder("search.words")
                        .payload(Map.of("meta", Map.of("null", "x", "NULL", "y")))
                        .build())
                .task()
                .id();

        assertThat(ids(q().payload(List.of("meta", "null"), "x").build())).containsExactly(named);
        assertThat(ids(q().payload(List.of("meta", "NULL"), "y").build())).containsExactly(named);
    }

    @Test
    void payloadPathSegmentsOfDigitsNameObjectFieldsAndArrayElements() {
        tasks = producer();
        long byYear = tasks.enqueue(TaskRequest.builder("search.digits")
                        .payload(Map.of("years", Map.of("2024", "gold", "7", "silver")))
                        .build())
                .task()
                .id();
        long inArray = tasks.enqueue(TaskRequest.builder("search.digits")
                        .payload(Map.of("years", List.of("a", "b", "c", "d", "e", "f", "g", "gold")))
                        .build())
                .task()
                .id();

        assertThat(ids(q().payload(List.of("years", "2024"), "gold").build())).containsExactly(byYear);
        assertThat(ids(q().payload(List.of("years", "7"), "silver").build())).containsExactly(byYear);
        assertThat(ids(q().payload(List.of("years", "7"), "gold").build())).containsExactly(inArray);
        assertThat(ids(q().payload(List.of("years", "0"), "a").build())).containsExactly(inArray);
    }

    @Test
    void searchReturnsFullTasksAndSummariesTheListedFields() {
        tasks = producer();
        long id = enqueue(1, "s", "search.order").get(0);
        Task task = tasks.search(q().id(id).build(), 10).items().get(0);
        assertThat(task).isEqualTo(tasks.find(id).orElseThrow());
        TaskSummary summary =
                tasks.searchSummaries(q().id(id).build(), 10).items().get(0);
        assertThat(summary)
                .isEqualTo(new TaskSummary(
                        id,
                        "s",
                        "search.order",
                        TaskStatus.PENDING,
                        0,
                        task.maxAttempts(),
                        "s-key-0",
                        "REF-s-0",
                        task.runAt(),
                        task.createdAt(),
                        null,
                        null,
                        false,
                        null,
                        null));
    }

    @Test
    void theIdWalkAndTheCountCoverEveryMatchingTaskBeyondOnePage() {
        tasks = producer();
        List<Long> w = enqueue(1203, "w", "search.order");
        enqueue(7, "other", "search.order");
        for (TaskQuery query : List.of(
                q().queue("w").build(),
                q().queue("w").payload(List.of("tags", "1"), "x").build())) {
            List<Long> walked = new ArrayList<>();
            TaskQuery step = query;
            while (step != null) {
                TaskIds batch = tasks.searchIds(step, 500);
                walked.addAll(batch.ids());
                step = batch.next() == null ? null : step.before(batch.next());
            }
            assertThat(walked).containsExactlyElementsOf(newestFirst(w));
            assertThat(tasks.count(query)).isEqualTo(1203);
        }
        assertThat(tasks.count(
                        q().queue("w").payload(List.of("customer", "id"), "c2").build()))
                .isEqualTo(401);
        assertThat(tasks.count(q().queue("w").before(w.get(10)).build())).isEqualTo(10);
    }

    @Test
    void malformedQueriesAreRefusedWithWhatToDo() {
        assertThatThrownBy(
                        () -> q().payload(List.of("a'); DROP TABLE x; --"), "1").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("payload path must be dotted field names");
        assertThatThrownBy(() -> q().payload(List.of("a"), null).build())
                .hasMessageContaining("payload value is required");
        assertThatThrownBy(() -> q().payload(null, "1").build()).hasMessageContaining("needs a payload path");
        assertThatThrownBy(() -> q().timeout(Duration.ofMillis(10)).build())
                .hasMessageContaining("at least one second");
        tasks = producer();
        assertThatThrownBy(() -> tasks.searchSummaries(TaskQuery.ALL, 0)).hasMessageContaining("size must be");
    }
}
