package io.dbtasks.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import io.dbtasks.TaskSummary;
import io.dbtasks.testing.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's reads on each database, through the core's query API: every filter, keyset
 * paging, payload search (JSON functions on PostgreSQL and MariaDB, the Java fallback on H2),
 * counts, the id walk of bulk actions, the overview aggregate and the per-minute outcomes.
 */
abstract class DashboardStoreContract {
    protected abstract TestDatabase database();

    private DbTasks tasks;
    private DashboardStore store;
    private final List<DbTasks> engines = new ArrayList<>();

    record Order(long orderId, Customer customer, String note) {}

    record Customer(String id) {}

    @BeforeEach
    void setUp() {
        Assumptions.assumeTrue(database().required(), database() + " is not in dbtasks.test.databases");
        DbTasks.builder(database().dataSource()).workers(false).build().close();
        database().clear();
        tasks = DbTasks.builder(database().dataSource())
                .workers(false)
                .handler("store.order", Order.class, (ctx, p) -> {})
                .build();
        engines.add(tasks);
        store = new DashboardStore(tasks, Duration.ofSeconds(15));
    }

    @AfterEach
    void tearDown() {
        engines.forEach(DbTasks::close);
    }

    private List<Long> enqueue(int n, String queue, String referencePrefix) {
        List<TaskRequest> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(TaskRequest.builder("store.order")
                    .queue(queue)
                    .reference(referencePrefix == null ? null : referencePrefix + i)
                    .idempotencyKey(queue + "-key-" + i)
                    .payload(new Order(i, new Customer("c" + (i % 3)), "n\"" + i))
                    .build());
        }
        return tasks.enqueueAll(list).stream().map(r -> r.task().id()).toList();
    }

    private static List<Long> newestFirst(List<Long> ids) {
        List<Long> l = new ArrayList<>(ids);
        java.util.Collections.reverse(l);
        return l;
    }

    private static TaskSearch search(
            String state, String queue, String key, String reference, String path, String value) {
        return TaskSearch.of(state, queue, null, key, reference, null, null, null, path, value);
    }

    @Test
    void keysetPagesCoverEveryMatchingTaskOnceNewestFirst() {
        List<Long> ids = enqueue(23, "a", null);
        enqueue(5, "b", null);
        List<Long> seen = new ArrayList<>();
        Long cursor = null;
        int pages = 0;
        do {
            DashboardStore.TaskPage page = store.list(search(null, "a", null, null, null, null), cursor, 10);
            page.rows().forEach(r -> seen.add(r.id()));
            assertThat(page.rows()).allSatisfy(r -> assertThat(r.queue()).isEqualTo("a"));
            cursor = page.next();
            pages++;
        } while (cursor != null);
        assertThat(pages).isEqualTo(3);
        assertThat(seen).containsExactlyElementsOf(newestFirst(ids));
    }

    @Test
    void filtersByStateKeyReferenceIdAndTimeRange() {
        List<Long> ids = enqueue(6, "f", "REF-");
        tasks.cancel(ids.get(2));
        assertThat(store.list(search("CANCELLED", "f", null, null, null, null), null, 50)
                        .rows())
                .extracting(TaskSummary::id)
                .containsExactly(ids.get(2));
        assertThat(store.list(search(null, null, "f-key-4", null, null, null), null, 50)
                        .rows())
                .extracting(TaskSummary::id)
                .containsExactly(ids.get(4));
        assertThat(store.list(search(null, null, null, "REF-5", null, null), null, 50)
                        .rows())
                .extracting(TaskSummary::id)
                .containsExactly(ids.get(5));
        TaskSearch byId = TaskSearch.of(
                null, null, null, null, null, null, null, ids.get(1).toString(), null, null);
        assertThat(store.list(byId, null, 50).rows())
                .extracting(TaskSummary::id)
                .containsExactly(ids.get(1));
        Instant created = tasks.find(ids.get(0)).orElseThrow().createdAt();
        TaskSearch future = TaskSearch.of(
                null, "f", null, null, null, created.plus(Duration.ofHours(1)).toString(), null, null, null, null);
        assertThat(store.list(future, null, 50).rows()).isEmpty();
        TaskSearch past = TaskSearch.of(
                null,
                "f",
                null,
                null,
                null,
                created.minus(Duration.ofHours(1)).toString(),
                created.plus(Duration.ofHours(1)).toString(),
                null,
                null,
                null);
        assertThat(store.list(past, null, 50).rows()).hasSize(6);
    }

    @Test
    void payloadSearchMatchesNestedFieldsNumbersAndQuotedText() {
        List<Long> ids = enqueue(9, "p", null);
        assertThat(store.list(search(null, "p", null, null, "customer.id", "c1"), null, 50)
                        .rows())
                .extracting(TaskSummary::id)
                .containsExactly(ids.get(7), ids.get(4), ids.get(1));
        assertThat(store.list(search(null, null, null, null, "orderId", "5"), null, 50)
                        .rows())
                .extracting(TaskSummary::id)
                .containsExactly(ids.get(5));
        assertThat(store.list(search(null, null, null, null, "note", "n\"3"), null, 50)
                        .rows())
                .extracting(TaskSummary::id)
                .containsExactly(ids.get(3));
        assertThat(store.list(search(null, null, null, null, "missing.field", "1"), null, 50)
                        .rows())
                .isEmpty();
        // paging works with a payload filter too
        DashboardStore.TaskPage first = store.list(search(null, "p", null, null, "customer.id", "c1"), null, 2);
        assertThat(first.rows()).hasSize(2);
        DashboardStore.TaskPage second =
                store.list(search(null, "p", null, null, "customer.id", "c1"), first.next(), 2);
        assertThat(second.rows()).extracting(TaskSummary::id).containsExactly(ids.get(1));
        assertThat(second.next()).isNull();
        assertThat(store.count(search(null, "p", null, null, "customer.id", "c1")))
                .isEqualTo(3);
    }

    @Test
    void aPayloadPathThatIsNotDottedNamesIsRefused() {
        assertThatThrownBy(() -> search(null, null, null, null, "a'); DROP TABLE x; --", "1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("payload path");
        assertThatThrownBy(() -> TaskSearch.of("SOON", null, null, null, null, null, null, null, null, null))
                .hasMessageContaining("state must be one of");
        assertThatThrownBy(() -> TaskSearch.of(null, null, null, null, null, null, null, "0x10", null, null))
                .hasMessageContaining("digits only");
    }

    @Test
    void theIdWalkOfABulkActionVisitsEveryMatchingTaskBeyondOnePage() {
        List<Long> ids = enqueue(1203, "w", null);
        enqueue(7, "other", null);
        List<Long> walked = new ArrayList<>();
        Long cursor = null;
        do {
            DashboardStore.IdBatch batch = store.ids(search(null, "w", null, null, null, null), cursor, 500);
            walked.addAll(batch.ids());
            cursor = batch.lastScanned();
        } while (cursor != null);
        assertThat(walked).containsExactlyElementsOf(newestFirst(ids));
        assertThat(store.count(search(null, "w", null, null, null, null))).isEqualTo(1203);
    }

    @Test
    void theOverviewAggregateCountsByQueueAndStateWithTheEarliestDuePendingTask() {
        List<Long> a = enqueue(4, "qa", null);
        enqueue(2, "qb", null);
        tasks.cancel(a.get(0));
        Instant earliest = tasks.find(a.get(1)).orElseThrow().runAt();
        List<DashboardStore.StateCount> counts = store.countByQueueAndState();
        assertThat(counts)
                .extracting(c -> c.queue() + ":" + c.status() + "=" + c.count())
                .containsExactlyInAnyOrder("qa:PENDING=3", "qa:CANCELLED=1", "qb:PENDING=2");
        DashboardStore.StateCount pendingA = counts.stream()
                .filter(c -> c.queue().equals("qa") && c.status() == TaskStatus.PENDING)
                .findFirst()
                .orElseThrow();
        assertThat(pendingA.earliestRunAt()).isEqualTo(earliest);
    }

    @Test
    void outcomesPerMinuteCountTheAttemptsOfAnIdRange() throws Exception {
        DbTasks worker = DbTasks.builder(database().dataSource())
                .pollInterval(Duration.ofMillis(50))
                .queue("run", 2)
                .handler("store.ok", Void.class, (ctx, p) -> {})
                .handler("store.bad", Void.class, (ctx, p) -> {
                    throw new IllegalStateException("no");
                })
                .build();
        engines.add(worker);
        List<TaskRequest> list = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            list.add(TaskRequest.builder("store.ok").queue("run").build());
        }
        list.add(TaskRequest.builder("store.bad").queue("run").maxAttempts(1).build());
        tasks.enqueueAll(list);
        worker.start();
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .until(() -> store.countByQueueAndState().stream()
                                .filter(c -> c.status() == TaskStatus.SUCCEEDED || c.status() == TaskStatus.FAILED)
                                .mapToLong(DashboardStore.StateCount::count)
                                .sum()
                        == 6);
        long max = store.maxAttemptId();
        List<DashboardStore.MinuteOutcomes> perMinute =
                store.outcomesPerMinute(0, max, Instant.now().minus(Duration.ofMinutes(5)));
        assertThat(perMinute.stream()
                        .mapToLong(DashboardStore.MinuteOutcomes::succeeded)
                        .sum())
                .isEqualTo(5);
        assertThat(perMinute.stream()
                        .mapToLong(DashboardStore.MinuteOutcomes::failed)
                        .sum())
                .isEqualTo(1);
        long nowMinute = Instant.now().getEpochSecond() / 60;
        assertThat(perMinute).allSatisfy(m -> assertThat(m.minute()).isBetween(nowMinute - 2, nowMinute));
        // The range excludes what it does not cover.
        assertThat(store.outcomesPerMinute(max, max, Instant.EPOCH)).isEmpty();
        assertThat(store.databaseNow())
                .isBetween(Instant.now().minusSeconds(60), Instant.now().plusSeconds(60));
    }

    @Test
    void readOnlyViewsListLocksGuardsAndInbox() {
        tasks.locks().tryAcquire("view.lock", Duration.ofMinutes(1));
        tasks.guards().runOnce("view.guard", Duration.ofMinutes(1), lease -> {});
        tasks.inbox().receive("view.consumer", "m-1", tx -> {});
        List<Map<String, Object>> locks = store.locks(10);
        assertThat(locks).singleElement().satisfies(r -> {
            assertThat(r.get("name")).isEqualTo("view.lock");
            assertThat(r.get("expires_at")).isInstanceOf(Instant.class);
        });
        assertThat(store.guards(10))
                .singleElement()
                .satisfies(r -> assertThat(r.get("once_key")).isEqualTo("view.guard"));
        assertThat(store.inbox(10))
                .singleElement()
                .satisfies(r -> assertThat(r.get("message_id")).isEqualTo("m-1"));
    }
}
