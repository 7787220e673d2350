package io.dbtasks.bench;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskRequest;
import io.dbtasks.workflow.Workflow;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Workflows, two measurements.
 *
 * <p>Waiting steps out of the claim's way: the no-op burn-down of {@code --burndown-tasks} at the
 * fixed worker count, once with {@code --waiting-tasks} WAITING steps in the table (in the
 * burn-down's own queue, each waiting for a gate step that never runs, with its dependency edge)
 * and once without, twice each in the order without, with, with, without (the waiting steps
 * inserted once for both runs beside them); the two ratios with/without are logged. The waiting steps are bulk-inserted as the engine inserts them (status WAITING, a
 * workflow and a step name, {@code waiting_for} 1).
 *
 * <p>Chains against single tasks: {@code --chains} workflows of {@value #CHAIN} steps in a line
 * (each step waits for the one before), one at a time, each followed by one single task enqueued
 * alone, into an idle queue of an engine with the fixed worker count. From the attempt rows
 * (database clock): a chain's step time (its dependency's finish to its own finish: the release,
 * the claim, the no-op run and the settle), its hand-off (the dependency's finish to its own start)
 * and the single task's enqueue-to-start (its {@code created_at} to its attempt's start).
 *
 * <p>Batch callbacks: a batch of {@code --tasks} no-op chunks (at most {@value
 * #MAX_CHUNKS}) run at the largest burn-down worker count, with an on-finish callback and without,
 * in the order without, with, with, without. Every chunk's settle counts the callback's row down under
 * its row lock, so the settles of one batch's chunks queue on that row; the ratio shows what that
 * costs when many chunks settle at once.
 */
final class WorkflowScenario implements Scenario {
    static final int CHAIN = 10;
    private static final String STEP_KIND = "bench.step";
    private static final String CHUNK_KIND = "bench.chunk";
    static final int MAX_CHUNKS = 2_000;
    /** Which parts run: {@code waiting}, {@code chains}, {@code callbacks}, comma-separated. */
    static final String PARTS = System.getProperty("dbtasks.bench.workflow.parts", "waiting,chains,callbacks");

    @Override
    public String name() {
        return "workflows";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        List<Result> results = new ArrayList<>();
        Burner burner = new Burner(run);
        if (!PARTS.contains("waiting")) {
            return rest(run, results);
        }
        burner.warmUpOnce(c.fixedWorkers(), c.burndownTasks());
        int workers = c.fixedWorkers();
        long waiting = c.waitingTasks();
        // A B B A: without, with, with, without. The waiting steps are inserted once and stay for
        // both runs beside them; between those, only the burned tasks and their attempts go.
        double[] seconds = new double[4];
        boolean[] order = {false, true, true, false};
        for (int k = 0; k < order.length; k++) {
            boolean with = order[k];
            if (k == 2) {
                removeBurned(run);
            } else {
                clear(run);
            }
            if (with && k == 1) {
                long start = System.nanoTime();
                insertWaiting(run, waiting);
                Log.line("workflows: " + waiting + " waiting steps inserted in "
                        + (System.nanoTime() - start) / 1_000_000 + " ms");
            }
            run.tasks().insertPending(c.burndownTasks());
            run.tasks().settle();
            double s = burner.burn(workers, 1, c.burndownTasks());
            seconds[k] = s;
            Result r = Result.throughput(
                    name(),
                    run.db(),
                    "W=" + workers + (with ? " beside " + waiting + " waiting steps" : " no waiting steps"),
                    with ? "burn-down beside waiting steps" : "burn-down alone",
                    workers,
                    c.burndownTasks(),
                    s);
            Log.result(r);
            results.add(r);
        }
        List<Double> ratios = List.of(seconds[0] / seconds[1], seconds[3] / seconds[2]);
        for (int pair = 0; pair < ratios.size(); pair++) {
            Log.line(String.format(
                    Locale.ROOT,
                    "workflows: pair %d, burn-down rate with/without waiting steps %.3f",
                    pair + 1,
                    ratios.get(pair)));
        }
        Log.line("workflows: ratios with/without " + ratios);
        return rest(run, results);
    }

    private List<Result> rest(BenchRun run, List<Result> results) throws Exception {
        clear(run);
        if (PARTS.contains("chains")) {
            results.addAll(chains(run));
            clear(run);
        }
        if (PARTS.contains("callbacks")) {
            results.addAll(callbacks(run));
            clear(run);
        }
        return results;
    }

    /** The chains against single tasks; see the class comment. */
    private List<Result> chains(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        int chains = c.chains();
        CountDownLatch[] done = {null};
        com.zaxxer.hikari.HikariDataSource pool = run.pool("bench-workflows", c.fixedWorkers() + 4);
        DbTasks engine = DbTasks.builder(pool)
                .migrate(false)
                .queue(TaskTable.QUEUE, c.fixedWorkers())
                .handler(STEP_KIND, String.class, (ctx, last) -> {
                    if ("last".equals(last)) {
                        done[0].countDown();
                    }
                })
                .build();
        engine.start();
        long start = System.nanoTime();
        try {
            for (int i = 0; i < chains + 5; i++) { // the first 5 of each warm up, unmeasured
                done[0] = new CountDownLatch(1);
                Workflow.Builder b = Workflow.named((i < 5 ? "warm-" : "chain-") + i);
                for (int k = 0; k < CHAIN; k++) {
                    TaskRequest step = TaskRequest.builder(STEP_KIND)
                            .queue(TaskTable.QUEUE)
                            .payload(k == CHAIN - 1 ? "last" : "step")
                            .build();
                    if (k == 0) {
                        b.step("s0", step);
                    } else {
                        b.step("s" + k, step, "s" + (k - 1));
                    }
                }
                engine.workflows().insert(b.build());
                await(done[0], "chain " + i);
                done[0] = new CountDownLatch(1);
                engine.enqueue(TaskRequest.builder(STEP_KIND)
                        .queue(TaskTable.QUEUE)
                        .name(i < 5 ? "warm" : "single")
                        .payload("last")
                        .build());
                await(done[0], "single task " + i);
            }
        } finally {
            engine.close();
            pool.close();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        String chainSteps = "SELECT t.id FROM dbtasks_task t JOIN dbtasks_workflow w ON w.id = t.workflow_id"
                + " WHERE w.name LIKE 'chain-%'";
        double[] stepTimes = millis(
                run,
                "SELECT " + diff(run, "a.finished_at", "b.finished_at") + " FROM dbtasks_dependency d"
                        + " JOIN dbtasks_attempt a ON a.task_id = d.task_id AND a.outcome = 'SUCCEEDED'"
                        + " JOIN dbtasks_attempt b ON b.task_id = d.depends_on AND b.outcome = 'SUCCEEDED'"
                        + " WHERE d.task_id IN (" + chainSteps + ")");
        double[] handoffs = millis(
                run,
                "SELECT " + diff(run, "a.started_at", "b.finished_at") + " FROM dbtasks_dependency d"
                        + " JOIN dbtasks_attempt a ON a.task_id = d.task_id AND a.outcome = 'SUCCEEDED'"
                        + " JOIN dbtasks_attempt b ON b.task_id = d.depends_on AND b.outcome = 'SUCCEEDED'"
                        + " WHERE d.task_id IN (" + chainSteps + ")");
        double[] singles = millis(
                run,
                "SELECT " + diff(run, "a.started_at", "t.created_at") + " FROM dbtasks_task t"
                        + " JOIN dbtasks_attempt a ON a.task_id = t.id AND a.outcome = 'SUCCEEDED'"
                        + " WHERE t.name = 'single'");
        List<Result> results = new ArrayList<>();
        String config = "W=" + c.fixedWorkers() + ", " + chains + " chains of " + CHAIN + " steps, one at a time";
        results.add(Result.plain(
                name(),
                run.db(),
                config + ": step time (dependency finish to step finish)",
                stepTimes.length,
                seconds,
                Result.Percentiles.of(stepTimes)));
        results.add(Result.plain(
                name(),
                run.db(),
                config + ": hand-off (dependency finish to step start)",
                handoffs.length,
                seconds,
                Result.Percentiles.of(handoffs)));
        results.add(Result.plain(
                name(),
                run.db(),
                "W=" + c.fixedWorkers() + ", single task enqueued alone: enqueue-to-start",
                singles.length,
                seconds,
                Result.Percentiles.of(singles)));
        for (Result r : results) {
            Log.line(String.format(
                    Locale.ROOT,
                    "workflows: %s: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d)",
                    r.config(),
                    r.latency().p50(),
                    r.latency().p99(),
                    r.latency().max(),
                    r.tasks()));
        }
        return results;
    }

    /** The batch callbacks part; see the class comment. */
    private List<Result> callbacks(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        int chunks = Math.min(MAX_CHUNKS, c.burndownTasks());
        int workers = c.workers().stream().mapToInt(Integer::intValue).max().orElse(c.fixedWorkers());
        List<Result> results = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        double[] seconds = new double[4];
        boolean[] order = {false, true, true, false};
        for (int k = 0; k < order.length; k++) {
            boolean with = order[k];
            {
                clear(run);
                try (com.zaxxer.hikari.HikariDataSource pool = run.pool("bench-batch", workers + 4)) {
                    DbTasks engine = DbTasks.builder(pool)
                            .migrate(false)
                            .queue(TaskTable.QUEUE, workers)
                            .chunkHandler(CHUNK_KIND, Void.class, (chunk, tx, p) -> {})
                            .handler(STEP_KIND, String.class, (ctx, p) -> {})
                            .build();
                    io.dbtasks.batch.BatchRequest.Builder b = io.dbtasks.batch.BatchRequest.builder(CHUNK_KIND, chunks)
                            .queue(TaskTable.QUEUE);
                    if (with) {
                        b.onFinish(TaskRequest.builder(STEP_KIND)
                                .queue(TaskTable.QUEUE)
                                .payload("callback")
                                .build());
                    }
                    long batch = engine.batches().create(b.build()).id();
                    long start = System.nanoTime();
                    engine.start();
                    long deadline = start + TimeUnit.MINUTES.toNanos(10);
                    while (!engine.batches().progress(batch).finished()) {
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("batch " + batch + " not finished after 10 minutes");
                        }
                        Thread.sleep(100);
                    }
                    seconds[k] = (System.nanoTime() - start) / 1e9;
                    engine.close();
                }
                Result r = Result.throughput(
                        name(),
                        run.db(),
                        "W=" + workers + ", a batch of " + chunks + " chunks"
                                + (with ? " with an on-finish callback" : " without callbacks"),
                        with ? "batch with callback" : "batch without callbacks",
                        workers,
                        chunks,
                        seconds[k]);
                Log.result(r);
                results.add(r);
            }
        }
        ratios.add(seconds[0] / seconds[1]);
        ratios.add(seconds[3] / seconds[2]);
        Log.line("workflows: batch ratios with/without a callback " + ratios);
        return results;
    }

    private static void await(CountDownLatch latch, String what) throws InterruptedException {
        if (!latch.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException(what + " did not finish within 60 s");
        }
    }

    /** @return an SQL expression for {@code a - b} in milliseconds, both timestamps */
    private static String diff(BenchRun run, String a, String b) {
        return switch (run.db()) {
            case POSTGRESQL -> "EXTRACT(EPOCH FROM (" + a + " - " + b + ")) * 1000";
            case MARIADB -> "TIMESTAMPDIFF(MICROSECOND, " + b + ", " + a + ") / 1000.0";
            case H2 -> "DATEDIFF('MICROSECOND', " + b + ", " + a + ") / 1000.0";
        };
    }

    private static double[] millis(BenchRun run, String sql) throws SQLException {
        List<Double> out = new ArrayList<>();
        try (Connection c = run.admin().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getDouble(1));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalStateException("no rows for " + sql);
        }
        double[] a = out.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        return a;
    }

    /** Deletes the burned-down tasks and every attempt, leaving the waiting steps. */
    private static void removeBurned(BenchRun run) throws SQLException {
        try (Connection c = run.admin().getConnection();
                Statement s = c.createStatement()) {
            s.execute("DELETE FROM dbtasks_attempt");
            s.execute("DELETE FROM dbtasks_task WHERE status = 'SUCCEEDED'");
        }
    }

    /** Empties the task, attempt, dependency and workflow tables. */
    private static void clear(BenchRun run) throws SQLException {
        run.tasks().reset();
        try (Connection c = run.admin().getConnection();
                Statement s = c.createStatement()) {
            s.execute(
                    run.db() == Database.POSTGRESQL ? "TRUNCATE dbtasks_dependency" : "DELETE FROM dbtasks_dependency");
            s.execute(run.db() == Database.POSTGRESQL ? "TRUNCATE dbtasks_workflow" : "DELETE FROM dbtasks_workflow");
            s.execute("DELETE FROM dbtasks_batch_chunk");
            s.execute("DELETE FROM dbtasks_batch");
        }
    }

    /**
     * Inserts one workflow with a gate step (PENDING in a queue nobody works) and {@code n} steps of
     * the bench queue WAITING for it, each with its edge.
     */
    private static void insertWaiting(BenchRun run, long n) throws SQLException {
        Database db = run.db();
        try (Connection c = run.admin().getConnection();
                Statement s = c.createStatement()) {
            long workflow;
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO dbtasks_workflow (name, created_at) VALUES ('waiting', " + db.now() + ")",
                    new String[] {"id"})) {
                ps.executeUpdate();
                try (ResultSet keys = ps.getGeneratedKeys()) {
                    keys.next();
                    workflow = keys.getLong(1);
                }
            }
            String columns = "queue, kind, status, priority, attempt, max_attempts, backoff, backoff_initial_ms,"
                    + " backoff_max_ms, backoff_multiplier, backoff_jitter, run_at, created_at, updated_at,"
                    + " workflow_id, step, waiting_for";
            String common = "0, 0, 3, 'EXPONENTIAL', 1000, 600000, 2.0, 0.2, " + db.now() + ", " + db.now() + ", "
                    + db.now() + ", " + workflow;
            s.executeUpdate("INSERT INTO dbtasks_task (" + columns + ") VALUES ('bench-gate', '" + TaskTable.KIND
                    + "', 'PENDING', " + common + ", 'gate', 0)");
            long gate;
            try (ResultSet rs = s.executeQuery("SELECT id FROM dbtasks_task WHERE step = 'gate'")) {
                rs.next();
                gate = rs.getLong(1);
            }
            long chunk = db == Database.POSTGRESQL ? 500_000 : 100_000;
            for (long done = 0; done < n; done += chunk) {
                long rows = Math.min(chunk, n - done);
                String step = db == Database.POSTGRESQL ? "'w' || (n + " + done + ")" : "CONCAT('w', n + " + done + ")";
                s.executeUpdate("INSERT INTO dbtasks_task (" + columns + ") SELECT '" + TaskTable.QUEUE + "', '"
                        + TaskTable.KIND + "', 'WAITING', " + common + ", " + step + ", 1 FROM " + db.rows(rows));
            }
            s.executeUpdate("INSERT INTO dbtasks_dependency (task_id, depends_on, on_failure) SELECT id, " + gate
                    + ", 'CANCEL' FROM dbtasks_task WHERE status = 'WAITING'");
        }
        run.tasks().analyze();
    }
}
