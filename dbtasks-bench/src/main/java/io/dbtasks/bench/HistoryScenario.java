package io.dbtasks.bench;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskQuery;
import io.dbtasks.TaskStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * History at scale: what a large table of finished tasks costs the live path, the dashboard's reads
 * and retention. In one run, on one database:
 *
 * <ol>
 *   <li>the burn-down of {@code tasks} no-op tasks at {@code historyWorkers} with an empty table
 *       (after the JVM's warm-up burn-down);
 *   <li>{@code historyTasks} finished tasks and their attempts loaded directly ({@link
 *       HistoryLoader}) and the table settled ({@link TaskTable#settle});
 *   <li>the dashboard's reads through the core's query API, 20 timed requests each after two
 *       untimed, once the history's closed hours are counted ({@link DbTasks#countHistory}): the
 *       overview's aggregate ({@link DbTasks#stateCounts()}), the first page of a list
 *       filtered by queue and state, of one filtered by reference, of one filtered by kind, state
 *       and creation day, and a filtered count;
 *   <li>the same burn-down beside the history: the ratio of the two is the figure, so both halves
 *       see the same machine load;
 *   <li>the overview again right after that burn-down, whose tasks all finished in the hour not yet
 *       counted (the live partition vacuumed first, as a running engine's vacuum check does);
 *   <li>one retention sweep ({@link DbTasks#sweepRetention()}) with every finished state kept
 *       {@code SPAN_DAYS - 1} days, which removes the oldest day of history: its wall time, and the
 *       table and index sizes (and dead tuples on PostgreSQL) before and after.
 * </ol>
 *
 * Each figure's configuration names the 1-minute load average when it was taken: the machine may be
 * shared.
 */
final class HistoryScenario implements Scenario {
    static final int REQUESTS = 20;
    static final int WARM_REQUESTS = 2;
    /** The smallest history the burn-downs wait for the kernel's writeback at. */
    static final long WRITEBACK_MIN_HISTORY = 1_000_000;

    @Override
    public String name() {
        return "history";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        TaskTable tasks = run.tasks();
        Database db = run.db();
        int workers = c.historyWorkers();
        long size = c.historyTasks();
        Burner burner = new Burner(run);
        List<Result> results = new ArrayList<>();

        burner.warmUpOnce(workers, c.burndownTasks());
        tasks.reset();
        tasks.insertPending(c.burndownTasks());
        tasks.settle();
        awaitWriteback(size);
        String emptyLoad = load();
        double emptySeconds = burner.burn(workers, 1, c.burndownTasks());
        Result empty = Result.throughput(
                name(),
                db,
                "history=0 W=" + workers + " load " + emptyLoad,
                "burn-down, empty history",
                workers,
                c.burndownTasks(),
                emptySeconds);
        Log.result(empty);
        results.add(empty);

        tasks.reset();
        HistoryLoader loader = new HistoryLoader(run.admin(), db);
        long attempts = loader.loadLogged(size, name());
        settleAttempts(run); // before the task table's settle, whose CHECKPOINT then covers both
        tasks.settle();
        Log.line("history: sizes after load: " + HistoryLoader.describe(loader.sizes()));

        try (DbTasks reader = DbTasks.builder(run.admin())
                .workers(false)
                .migrate(false)
                .retention(TaskStatus.SUCCEEDED, Duration.ofDays(HistoryLoader.SPAN_DAYS - 1))
                .retention(TaskStatus.FAILED, Duration.ofDays(HistoryLoader.SPAN_DAYS - 1))
                .retention(TaskStatus.CANCELLED, Duration.ofDays(HistoryLoader.SPAN_DAYS - 1))
                .build()) {
            // The engines' maintenance counts closed hours of history; the backfill of the whole
            // loaded span is done once here, before the overview is read.
            long countStart = System.nanoTime();
            int hours = reader.countHistory(Integer.MAX_VALUE);
            Log.line(String.format(
                    Locale.ROOT,
                    "history counts: %d hour(s) of %d finished tasks counted in %.1f s",
                    hours,
                    size,
                    (System.nanoTime() - countStart) / 1e9));
            String q = HistoryLoader.queue(1);
            Callable<Integer> overview = () -> reader.stateCounts().size();
            results.add(reads(db, "overview: stateCounts()", size, overview));
            TaskQuery failedInQueue =
                    TaskQuery.builder().queue(q).status(TaskStatus.FAILED).build();
            results.add(reads(
                    db,
                    "list: queue=" + q + " status=FAILED, first 50",
                    size,
                    () -> reader.searchSummaries(failedInQueue, 50).items().size()));
            TaskQuery byReference = TaskQuery.builder().reference("ref-12345").build();
            results.add(reads(
                    db,
                    "list: reference=ref-12345, first 50",
                    size,
                    () -> reader.searchSummaries(byReference, 50).items().size()));
            TaskQuery kindInRange = TaskQuery.builder()
                    .kind("bench.h2")
                    .status(TaskStatus.SUCCEEDED)
                    .created(
                            Instant.now().minus(Duration.ofDays(3)),
                            Instant.now().minus(Duration.ofDays(2)))
                    .build();
            results.add(reads(
                    db,
                    "list: kind=bench.h2 SUCCEEDED created 3-2 days ago, first 50",
                    size,
                    () -> reader.searchSummaries(kindInRange, 50).items().size()));
            results.add(
                    reads(db, "count: queue=" + q + " status=FAILED", size, () -> (int) reader.count(failedInQueue)));

            tasks.insertPending(c.burndownTasks());
            tasks.settle();
            awaitWriteback(size);
            String fullLoad = load();
            double fullSeconds = burner.burn(workers, 1, c.burndownTasks());
            double ratio = emptySeconds / fullSeconds;
            Result full = Result.throughput(
                    name(),
                    db,
                    String.format(
                            Locale.ROOT,
                            "history=%d (+%d attempts) W=%d load %s, x%.2f of empty history",
                            size,
                            attempts,
                            workers,
                            fullLoad,
                            ratio),
                    "burn-down, with history",
                    workers,
                    c.burndownTasks(),
                    fullSeconds);
            Log.result(full);
            results.add(full);

            // Right after the burn-down its tasks all finished in the open hour, which the counts do
            // not hold yet: the overview counts them from the task table. The live partition is
            // vacuumed first, as a running engine's vacuum check does within its interval.
            tasks.vacuumLive();
            results.add(reads(db, "overview right after the burn-down: stateCounts()", size, overview));

            results.add(retention(run, loader, reader, size));
        }
        return results;
    }

    /** Times {@link #REQUESTS} calls of {@code request} after {@link #WARM_REQUESTS} untimed ones. */
    private Result reads(Database db, String what, long size, Callable<Integer> request) throws Exception {
        for (int i = 0; i < WARM_REQUESTS; i++) {
            request.call();
        }
        String loadBefore = load();
        double[] millis = new double[REQUESTS];
        long total = 0;
        int rows = 0;
        for (int i = 0; i < REQUESTS; i++) {
            long start = System.nanoTime();
            rows = request.call();
            long took = System.nanoTime() - start;
            total += took;
            millis[i] = took / 1e6;
        }
        Arrays.sort(millis);
        Result r = Result.plain(
                name(),
                db,
                what + " (" + rows + " rows) history=" + size + " load " + loadBefore,
                REQUESTS,
                total / 1e9,
                Result.Percentiles.of(millis));
        Log.line(String.format(
                Locale.ROOT,
                "history: %s: median %.1f ms, p95 %.1f ms, max %.1f ms",
                what,
                r.latency().p50(),
                r.latency().p95(),
                r.latency().max()));
        return r;
    }

    /** One sweep of the oldest day, with the sizes before and after. */
    private Result retention(BenchRun run, HistoryLoader loader, DbTasks reader, long size) throws Exception {
        Map<String, Long> before = loader.sizes();
        long finishedBefore = run.tasks().count("status IN ('SUCCEEDED', 'FAILED', 'CANCELLED')");
        String loadBefore = load();
        long start = System.nanoTime();
        long deleted = reader.sweepRetention();
        double seconds = (System.nanoTime() - start) / 1e9;
        if (run.db() == Database.POSTGRESQL) {
            Thread.sleep(1500); // the statistics collector publishes dead tuples with a delay
        }
        Map<String, Long> after = loader.sizes();
        long finishedAfter = run.tasks().count("status IN ('SUCCEEDED', 'FAILED', 'CANCELLED')");
        String config = String.format(
                Locale.ROOT,
                "retention of 1 of %d days, history=%d, load %s: %d tasks deleted (%d -> %d); before: %s;"
                        + " after: %s",
                HistoryLoader.SPAN_DAYS,
                size,
                loadBefore,
                deleted,
                finishedBefore,
                finishedAfter,
                HistoryLoader.describe(before),
                HistoryLoader.describe(after));
        Result r = Result.plain(name(), run.db(), config, Math.max(1, deleted), seconds, null);
        Log.line(String.format(Locale.ROOT, "history: %s, %.2f s", config, seconds));
        return r;
    }

    /** Brings the attempt table's statistics and visibility map up to date, as the task table's. */
    private static void settleAttempts(BenchRun run) throws Exception {
        try (java.sql.Connection c = run.admin().getConnection();
                java.sql.Statement s = c.createStatement()) {
            switch (run.db()) {
                case POSTGRESQL -> s.execute("VACUUM (ANALYZE) dbtasks_attempt");
                case MARIADB -> s.execute("ANALYZE TABLE dbtasks_attempt");
                case H2 -> s.execute("ANALYZE TABLE dbtasks_attempt");
            }
        }
    }

    /**
     * Waits (up to 3 minutes) until the kernel has written back the dirty pages of the load and the
     * checkpoint (Dirty + Writeback in {@code /proc/meminfo} under 64 MB), so the burn-down's commits
     * do not wait behind gigabytes of background writes. Only meaningful with the database on this
     * machine; off Linux, and for histories under {@link #WRITEBACK_MIN_HISTORY} tasks, it returns at
     * once.
     */
    static void awaitWriteback(long size) throws InterruptedException {
        if (size < WRITEBACK_MIN_HISTORY) {
            return; // a small load leaves little to write back, and a smoke run must not wait
        }
        long start = System.nanoTime();
        long kb = dirtyKb();
        while (kb > 64 * 1024 && System.nanoTime() - start < 180_000_000_000L) {
            Thread.sleep(1000);
            kb = dirtyKb();
        }
        long waited = (System.nanoTime() - start) / 1_000_000;
        if (waited > 1000) {
            Log.line("history: waited " + waited + " ms for the kernel's writeback (" + kb / 1024 + " MB left)");
        }
    }

    private static long dirtyKb() {
        try {
            long kb = 0;
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("Dirty:") || line.startsWith("Writeback:")) {
                    kb += Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
            return kb;
        } catch (Exception e) {
            return 0;
        }
    }

    /** @return the 1-minute load average, or {@code n/a} off Linux */
    static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (Exception e) {
            return "n/a";
        }
    }
}
