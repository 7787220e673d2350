package io.dbtasks.spring.actuator;

import io.dbtasks.DbTasks;
import io.dbtasks.QueueDepth;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code /actuator/dbtasks} endpoint: this instance's worker id, database and kinds, and every
 * queue (worked here or holding tasks) with this instance's concurrency for it and its depth
 * cluster-wide (pending, running, failed, due now, oldest due age). Each read runs one {@link
 * DbTasks#queueDepths()} query. Expose it with {@code management.endpoints.web.exposure.include}.
 */
@Endpoint(id = "dbtasks")
public class DbTasksEndpoint {
    private final DbTasks dbTasks;

    /** @param dbTasks the engine */
    public DbTasksEndpoint(DbTasks dbTasks) {
        this.dbTasks = dbTasks;
    }

    /** @return the engine's description, a JSON object */
    @ReadOperation
    public Map<String, Object> dbtasks() {
        Map<String, Integer> concurrency = dbTasks.queues();
        Map<String, QueueDepth> depths = new TreeMap<>();
        for (QueueDepth d : dbTasks.queueDepths()) {
            depths.put(d.queue(), d);
        }
        TreeSet<String> names = new TreeSet<>(concurrency.keySet());
        names.addAll(depths.keySet());
        List<Map<String, Object>> queues = names.stream()
                .map(q -> {
                    QueueDepth d = depths.getOrDefault(q, new QueueDepth(q, 0, 0, 0, 0, java.time.Duration.ZERO));
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("name", q);
                    m.put("concurrency", concurrency.getOrDefault(q, 0));
                    m.put("pending", d.pending());
                    m.put("running", d.running());
                    m.put("failed", d.failed());
                    m.put("waiting", d.waiting());
                    m.put("dueNow", d.dueNow());
                    m.put("oldestDueAgeSeconds", d.oldestDueAge().toMillis() / 1000.0);
                    return m;
                })
                .toList();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("workerId", dbTasks.workerId());
        out.put("database", dbTasks.dialect());
        out.put("running", dbTasks.isRunning());
        out.put("runningTasks", dbTasks.runningCount());
        out.put("kinds", new TreeSet<>(dbTasks.kinds()));
        out.put("queues", queues);
        return out;
    }
}
