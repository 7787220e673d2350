package io.dbtasks.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskKind;
import io.dbtasks.TaskRequest;
import io.dbtasks.TaskStatus;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** A {@link TaskKind} names a kind and its payload type once, for the handler and the request. */
public abstract class TypedKindContract extends EngineHarness {
    record SyncOrder(long orderId, String operator) {}

    static final TaskKind<SyncOrder> SYNC_ORDER = TaskKind.of("order.sync", SyncOrder.class);

    @Test
    void aTypedKindRegistersItsHandlerAndRequestsItsTasks() {
        List<SyncOrder> seen = new CopyOnWriteArrayList<>();
        DbTasks tasks = engine(b -> b.handler(SYNC_ORDER, (ctx, order) -> seen.add(order)));
        long id = tasks.enqueue(TaskRequest.of(SYNC_ORDER, new SyncOrder(10001, "admin")))
                .task()
                .id();
        long viaBuilder = tasks.enqueue(TaskRequest.builder(SYNC_ORDER)
                        .payload(new SyncOrder(10002, "web"))
                        .build())
                .task()
                .id();
        tasks.start();
        awaitStatus(tasks, id, TaskStatus.SUCCEEDED);
        awaitStatus(tasks, viaBuilder, TaskStatus.SUCCEEDED);
        assertThat(seen).containsExactlyInAnyOrder(new SyncOrder(10001, "admin"), new SyncOrder(10002, "web"));
    }

    @Test
    void theEngineSaysEachKindsPayloadType() {
        DbTasks tasks = engine(
                b -> b.handler(SYNC_ORDER, (ctx, order) -> {}).handler("no.payload", Void.class, (ctx, none) -> {}));
        assertThat(tasks.kind("order.sync")).contains(SYNC_ORDER);
        assertThat(tasks.kind("no.payload")).contains(TaskKind.of("no.payload", Void.class));
        assertThat(tasks.kind("unknown")).isEmpty();
        assertThat(tasks.kind(null)).isEmpty();
    }
}
