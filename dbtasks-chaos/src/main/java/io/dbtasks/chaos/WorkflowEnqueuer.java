package io.dbtasks.chaos;

import io.dbtasks.DbTasks;
import io.dbtasks.RetryPolicy;
import io.dbtasks.TaskRequest;
import io.dbtasks.workflow.Workflow;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * The workflow workload's producer: inserts the workflows {@code chaos-wf-0 .. chaos-wf-(n-1)} of
 * {@code steps} steps of kind {@value ChaosSchema#STEP_KIND} each, with random dependencies (a DAG:
 * step {@code k} depends on up to three of the steps before it, chosen at random, so that some
 * steps fan out and others fan in), spread over a given time so that faults strike while
 * workflows keep arriving. A workflow is acknowledged when its insert returned; a failed insert is
 * retried unless a workflow of that name was committed meanwhile (the failure came after the
 * commit), so that each name exists once.
 */
public final class WorkflowEnqueuer {
    /** The prefix of the workflows' names. */
    public static final String PREFIX = "chaos-wf-";

    private final DbTasks client;
    private final DataSource ds;
    private final Set<String> acknowledged;
    private final Random random;
    private final AtomicLong failedCalls = new AtomicLong();
    private final AtomicLong edges = new AtomicLong();

    /**
     * @param client an engine without workers on the chaos database
     * @param ds the chaos database, to look up a workflow whose insert failed
     * @param acknowledged receives each acknowledged workflow's name; must be thread-safe
     * @param seed the seed of the random graphs
     */
    public WorkflowEnqueuer(DbTasks client, DataSource ds, Set<String> acknowledged, long seed) {
        this.client = client;
        this.ds = ds;
        this.acknowledged = acknowledged;
        this.random = new Random(seed);
    }

    /**
     * @param workflows how many workflows
     * @param steps steps per workflow
     * @param spread how long inserting should take in all, roughly
     * @throws InterruptedException if interrupted
     */
    public void run(int workflows, int steps, Duration spread) throws InterruptedException {
        long pauseNanos = spread.toNanos() / Math.max(1, workflows);
        long next = System.nanoTime();
        for (int i = 0; i < workflows; i++) {
            String name = PREFIX + i;
            Workflow workflow = graph(name, steps);
            while (true) {
                try {
                    client.workflows().insert(workflow);
                    break;
                } catch (RuntimeException e) {
                    failedCalls.incrementAndGet();
                    Thread.sleep(200);
                    if (exists(name)) {
                        break;
                    }
                }
            }
            acknowledged.add(name);
            next += pauseNanos;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            }
        }
    }

    private Workflow graph(String name, int steps) {
        Workflow.Builder b = Workflow.named(name);
        for (int k = 0; k < steps; k++) {
            List<String> candidates = new ArrayList<>();
            for (int j = 0; j < k; j++) {
                candidates.add("s" + j);
            }
            java.util.Collections.shuffle(candidates, random);
            int n = k == 0 ? 0 : random.nextInt(Math.min(3, k) + 1);
            edges.addAndGet(n);
            b.step(
                    "s" + k,
                    TaskRequest.builder(ChaosSchema.STEP_KIND)
                            .queue(ChaosSchema.QUEUE)
                            .maxAttempts(50)
                            .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(200)))
                            .build(),
                    candidates.subList(0, n).toArray(String[]::new));
        }
        return b.build();
    }

    private boolean exists(String name) {
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM dbtasks_workflow WHERE name = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) > 0;
            }
        } catch (SQLException e) {
            return false; // the database cannot answer: insert again, the next failure looks again
        }
    }

    /** @return insert calls that failed */
    public long failedCalls() {
        return failedCalls.get();
    }

    /** @return dependency edges in the workflows inserted so far */
    public long edges() {
        return edges.get();
    }
}
