package io.dbtasks.testing;

import io.dbtasks.event.TaskEvent;
import io.dbtasks.event.TaskEventListener;
import io.dbtasks.event.WorkerEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** A listener that keeps every event it receives, per task in arrival order. Thread-safe. */
public final class EventRecorder implements TaskEventListener {
    private final Map<Long, List<TaskEvent>> byTask = new ConcurrentHashMap<>();
    private final List<WorkerEvent> workerEvents = new CopyOnWriteArrayList<>();

    @Override
    public void onTaskEvent(TaskEvent event) {
        byTask.computeIfAbsent(event.taskId(), id -> new CopyOnWriteArrayList<>())
                .add(event);
    }

    @Override
    public void onWorkerEvent(WorkerEvent event) {
        workerEvents.add(event);
    }

    /** @return the events of task {@code id} so far, in the order received */
    public List<TaskEvent> of(long id) {
        return List.copyOf(byTask.getOrDefault(id, List.of()));
    }

    /** @return the types of task {@code id}'s events published by {@code workerId}, in order */
    public List<TaskEvent.Type> types(long id, String workerId) {
        List<TaskEvent.Type> types = new ArrayList<>();
        for (TaskEvent e : of(id)) {
            if (e.workerId().equals(workerId)) {
                types.add(e.type());
            }
        }
        return types;
    }

    /** @return whether task {@code id} has had an event of {@code type} under {@code fencingToken} */
    public boolean has(TaskEvent.Type type, long id, long fencingToken) {
        return of(id).stream()
                .anyMatch(e -> e.type() == type && e.fencingToken() != null && e.fencingToken() == fencingToken);
    }

    /** @return how many task events were received in all */
    public int count() {
        return byTask.values().stream().mapToInt(List::size).sum();
    }

    public List<WorkerEvent> workerEvents() {
        return List.copyOf(workerEvents);
    }
}
