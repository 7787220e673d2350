package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Enqueue: one client thread stores N tasks through the public API on a producer-only engine, one
 * {@code enqueue} (one transaction) per task, then {@code enqueueAll} in batches of 100 and of 1000
 * (one transaction per batch).
 */
final class EnqueueScenario implements Scenario {
    static final List<Integer> BATCHES = List.of(1, 100, 1000);

    @Override
    public String name() {
        return "enqueue";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        int tasks = run.config().enqueueTasks();
        TaskRequest request =
                TaskRequest.builder(TaskTable.KIND).queue(TaskTable.QUEUE).build();
        List<Result> results = new ArrayList<>();
        try (HikariDataSource ds = run.pool("bench-enqueue", 2)) {
            DbTasks producer = DbTasks.builder(ds).migrate(false).workers(false).build();
            for (int batch : BATCHES) {
                run.tasks().reset();
                List<TaskRequest> requests = Collections.nCopies(batch, request);
                int rounds = Math.max(1, tasks / batch);
                long start = System.nanoTime();
                for (int i = 0; i < rounds; i++) {
                    if (batch == 1) {
                        producer.enqueue(request);
                    } else {
                        producer.enqueueAll(requests);
                    }
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                long stored = run.tasks().open();
                if (stored != (long) rounds * batch) {
                    throw new IllegalStateException("enqueued " + rounds * batch + " tasks but " + stored + " stored");
                }
                Result r =
                        Result.plain(name(), run.db(), batch == 1 ? "single" : "batch=" + batch, stored, seconds, null);
                Log.result(r);
                results.add(r);
            }
            producer.close();
        }
        return results;
    }
}
