package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.limit.Limit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Limits and fairness against the plain burn-down, in one run so that the ratios compare like with
 * like. Each round runs every variant once, one after another, so that a shared machine's load
 * drifts over all of them alike:
 *
 * <ul>
 *   <li>{@code plain W=32} and {@code plain W=64}: the burn-down without keys;
 *   <li>{@code keys, no limit W=32}: every task with one of 1,000 keys in a queue without limits
 *       (the one-statement claim): what the key's indexes cost, whatever the claim;
 *   <li>{@code keyed W=32}: every task with one of 1,000 keys, and a default limit of 10,000 per key
 *       that never binds;
 *   <li>{@code keyed W=32, 20000 RUNNING elsewhere}: the same, with 20,000 tasks RUNNING in another
 *       queue all along: a count of RUNNING tasks reads theirs too (the rescue index holds every
 *       RUNNING task of the database);
 *   <li>{@code 50 keys limit 8 W=64}: 50 keys, at most 8 of a key running at once;
 *   <li>{@code fair W=32}: 1,000 keys in a queue set fair, without limits.
 * </ul>
 *
 * Then the claim's cost with tasks waiting behind a limit: the burn-down of 50 keys with limit 8 at
 * W=32, with {@code --limits-waiting} tasks of a key held at a limit of 1 in the queue, against the
 * same with none (before and after, to show the drift). Reports the median and spread of each
 * variant's rate and of its ratio to the plain burn-down of the same round, and of the RUNNING tasks
 * in the bench queue while it burned down ({@link RunningSampler}): a limit counts a task from its claim
 * until its outcome is written, so with a rate R and tasks RUNNING that long for T seconds each, R x
 * T tasks are RUNNING at once, and a limit binds once that passes it. {@code --limits-variants} runs
 * some of the variants only.
 */
final class LimitsScenario implements Scenario {
    private static final String HOT = "hot";
    /** Tasks RUNNING in another queue for the variant that shows what counting RUNNING tasks costs. */
    static final int ELSEWHERE = 20_000;

    @Override
    public String name() {
        return "limits";
    }

    private interface Setup {
        void apply(DbTasks admin) throws Exception;
    }

    private record Variant(String label, int workers, Setup setup, String base) {}

    /** Per variant, the samples of its burn-downs' RUNNING tasks; filled as they run. */
    private final Map<String, List<RunningSampler.Sample>> running = new LinkedHashMap<>();

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        int n = c.burndownTasks();
        Burner burner = new Burner(run);
        List<Result> results = new ArrayList<>();
        running.clear();
        try (HikariDataSource ds = run.pool("bench-limits-admin", 2)) {
            DbTasks admin = DbTasks.builder(ds).migrate(false).workers(false).build();
            try {
                List<Variant> variants = List.of(
                        new Variant("plain W=32", 32, a -> run.tasks().insertPending(n), null),
                        new Variant(
                                "keys, no limit W=32",
                                32,
                                a -> run.tasks().insertPendingKeyed(n, 1000, "k"),
                                "plain W=32"),
                        new Variant(
                                "keyed W=32",
                                32,
                                a -> {
                                    a.limits().set(Limit.maxRunning(TaskTable.QUEUE, Limit.EVERY_KEY, 10_000));
                                    run.tasks().insertPendingKeyed(n, 1000, "k");
                                },
                                "plain W=32"),
                        new Variant(
                                "keyed W=32, " + ELSEWHERE + " RUNNING elsewhere",
                                32,
                                a -> {
                                    a.limits().set(Limit.maxRunning(TaskTable.QUEUE, Limit.EVERY_KEY, 10_000));
                                    run.tasks().insertPendingKeyed(n, 1000, "k");
                                    run.tasks().insertRunning(ELSEWHERE, "bench-elsewhere");
                                },
                                "plain W=32"),
                        new Variant(
                                "fair W=32",
                                32,
                                a -> {
                                    a.limits().setFair(TaskTable.QUEUE, true);
                                    run.tasks().insertPendingKeyed(n, 1000, "k");
                                },
                                "plain W=32"),
                        new Variant("plain W=64", 64, a -> run.tasks().insertPending(n), null),
                        new Variant(
                                "50 keys limit 8 W=64",
                                64,
                                a -> {
                                    a.limits().set(Limit.maxRunning(TaskTable.QUEUE, Limit.EVERY_KEY, 8));
                                    run.tasks().insertPendingKeyed(n, 50, "k");
                                },
                                "plain W=64"));
                burner.warmUpOnce(32, n);
                Map<String, List<Double>> rates = new LinkedHashMap<>();
                Map<String, List<Double>> ratios = new LinkedHashMap<>();
                for (int round = 0; round < c.limitsRuns(); round++) {
                    Map<String, Double> thisRound = new LinkedHashMap<>();
                    for (Variant v : variants) {
                        if (!c.limitsVariants().matcher(v.label()).find()) {
                            continue;
                        }
                        clear(run, admin);
                        v.setup().apply(admin);
                        checkpoint(run, ds);
                        double seconds;
                        try (RunningSampler sampler = new RunningSampler(ds)) {
                            seconds = burner.burn(v.workers(), 1, n);
                            sampled(v.label(), sampler);
                        }
                        Result r = Result.throughput(name(), run.db(), v.label(), "dbtasks", v.workers(), n, seconds);
                        Log.result(r);
                        results.add(r);
                        thisRound.put(v.label(), r.tasksPerSecond());
                        rates.computeIfAbsent(v.label(), k -> new ArrayList<>()).add(r.tasksPerSecond());
                        if (v.base() != null && thisRound.containsKey(v.base())) {
                            ratios.computeIfAbsent(v.label() + " / " + v.base(), k -> new ArrayList<>())
                                    .add(r.tasksPerSecond() / thisRound.get(v.base()));
                        }
                    }
                }
                if (c.limitsVariants().matcher("limit 8 W=32, waiting").find()) {
                    behindALimit(run, admin, burner, ds, n, results, rates, ratios);
                }
                clear(run, admin);
                rates.forEach((label, r) -> Log.line("limits: " + label + ": " + Spread.summary(r, "%.0f tasks/s")));
                ratios.forEach((label, r) -> Log.line("limits: " + label + ": " + Spread.summary(r, "%.2f")));
                running.forEach((label, samples) -> Log.line("limits: " + label + ": RUNNING in the bench queue, "
                        + (samples.isEmpty()
                                ? "no samples found a task RUNNING"
                                : Spread.summary(counts(samples, RunningSampler.Sample::running), "%.0f", "samples")
                                        + "; of the key with the most, "
                                        + Spread.summary(
                                                counts(samples, RunningSampler.Sample::mostOfAKey),
                                                "%.0f",
                                                "samples"))));
            } finally {
                admin.close();
            }
        }
        return results;
    }

    /**
     * 50 keys with limit 8 at W=32: with none waiting, then {@code --limits-waiting} tasks of a key at
     * its limit in the queue for each round, then none again.
     */
    private void behindALimit(
            BenchRun run,
            DbTasks admin,
            Burner burner,
            HikariDataSource ds,
            int n,
            List<Result> results,
            Map<String, List<Double>> rates,
            Map<String, List<Double>> ratios)
            throws Exception {
        BenchConfig c = run.config();
        long waiting = c.limitsWaiting();
        String empty = "limit 8 W=32, none waiting";
        String behind = "limit 8 W=32, " + waiting + " waiting";
        List<Double> before = new ArrayList<>();
        before.add(limited(run, admin, burner, ds, n, empty, results, false));
        clear(run, admin);
        admin.limits().set(Limit.maxRunning(TaskTable.QUEUE, Limit.EVERY_KEY, 8));
        long start = System.nanoTime();
        run.tasks().insertPendingKeyed(waiting, 1, HOT);
        run.tasks().insertHolder(HOT + "0");
        admin.limits().set(Limit.maxRunning(TaskTable.QUEUE, HOT + "0", 1));
        Log.line("limits: " + waiting + " tasks waiting behind key " + HOT + "0 inserted in "
                + (System.nanoTime() - start) / 1_000_000 + " ms");
        List<Double> loaded = new ArrayList<>();
        for (int round = 0; round < c.limitsRuns(); round++) {
            loaded.add(limited(run, admin, burner, ds, n, behind, results, true));
        }
        List<Double> after = new ArrayList<>();
        for (int round = 0; round < Math.max(1, c.limitsRuns() - 1); round++) {
            clear(run, admin);
            after.add(limited(run, admin, burner, ds, n, empty, results, false));
        }
        List<Double> none = new ArrayList<>(before);
        none.addAll(after);
        rates.put(empty, none);
        rates.put(behind, loaded);
        double noneMedian = Spread.median(none);
        ratios.put(
                behind + " / none waiting (median)",
                loaded.stream().map(r -> r / noneMedian).toList());
    }

    /** One burn-down of {@code n} tasks over 50 keys with limit 8 at W=32; returns its rate. */
    private double limited(
            BenchRun run,
            DbTasks admin,
            Burner burner,
            HikariDataSource ds,
            int n,
            String label,
            List<Result> results,
            boolean keep)
            throws Exception {
        if (!keep) {
            admin.limits().set(Limit.maxRunning(TaskTable.QUEUE, Limit.EVERY_KEY, 8));
        }
        run.tasks().insertPendingKeyed(n, 50, "k");
        checkpoint(run, ds);
        double seconds;
        try (RunningSampler sampler = new RunningSampler(ds)) {
            seconds = burner.burnCount(32, n);
            sampled(label, sampler);
        }
        Result r = Result.throughput(name(), run.db(), label, "dbtasks", 32, n, seconds);
        Log.result(r);
        results.add(r);
        return r.tasksPerSecond();
    }

    /**
     * On PostgreSQL, a checkpoint, so that every burn-down starts with the WAL in the same state: the
     * first change of each page after a checkpoint writes the whole page to the WAL, and a checkpoint
     * the server starts on its own (every {@code max_wal_size} of WAL, about every 15 s during these
     * burn-downs with the default) would otherwise fall into one variant's burn-down and not
     * another's. Without the privilege (a superuser or {@code pg_checkpoint}) the burn-downs run as
     * they come, and the log says so once.
     */
    private void checkpoint(BenchRun run, HikariDataSource ds) {
        if (run.db() != Database.POSTGRESQL || checkpointRefused) {
            return;
        }
        try (java.sql.Connection c = ds.getConnection();
                java.sql.Statement s = c.createStatement()) {
            s.execute("CHECKPOINT");
        } catch (java.sql.SQLException e) {
            checkpointRefused = true;
            Log.line("limits: no CHECKPOINT before each burn-down (" + e.getMessage()
                    + "); the server's own checkpoints fall where they come");
        }
    }

    /** Whether the server refused a CHECKPOINT: none is tried again. */
    private boolean checkpointRefused;

    /** Empties the task table and removes the bench queue's limits and fairness. */
    private static void clear(BenchRun run, DbTasks admin) throws Exception {
        run.tasks().reset();
        for (Limit l : admin.limits().list()) {
            if (l.queue().equals(TaskTable.QUEUE)) {
                admin.limits().remove(l.queue(), l.keyPattern());
            }
        }
        admin.limits().setFair(TaskTable.QUEUE, false);
    }

    /** Keeps the samples of a burn-down just ended with the others of its variant. */
    private void sampled(String label, RunningSampler sampler) {
        running.computeIfAbsent(label, k -> new ArrayList<>()).addAll(sampler.samples());
    }

    /** @return one count per sample; {@code samples} is not empty */
    private static List<Double> counts(
            List<RunningSampler.Sample> samples, java.util.function.ToLongFunction<RunningSampler.Sample> count) {
        return samples.stream().map(s -> (double) count.applyAsLong(s)).toList();
    }
}
