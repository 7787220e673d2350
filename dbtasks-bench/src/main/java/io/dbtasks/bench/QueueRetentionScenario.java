package io.dbtasks.bench;

import io.dbtasks.DbTasks;
import io.dbtasks.TaskStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Retention of a queue kept shorter than the rest, beside a large history: {@code historyTasks}
 * finished tasks and their attempts loaded directly ({@link HistoryLoader}, 30 days, 4 queues),
 * every finished state kept {@value #KEPT_DAYS} days, and the SUCCEEDED tasks of queue {@value
 * #SHORT} kept one hour. That queue has no rows in the history, as a queue whose retention keeps
 * pace has next to none, so each sweep deletes nothing and its time is what it reads. In each of
 * {@value #ROUNDS} rounds a new engine sweeps twice, each sweep timed:
 *
 * <ol>
 *   <li>the engine's first sweep, which reads the state's index range from the oldest row, as every
 *       sweep did before sweeps kept where they left off;
 *   <li>its next sweep, which reads from where the first left off.
 * </ol>
 *
 * Logs the median and spread of each.
 */
final class QueueRetentionScenario implements Scenario {
    static final String SHORT = "bench-short";
    static final int KEPT_DAYS = HistoryLoader.SPAN_DAYS + 1;
    static final int ROUNDS = 3;
    static final String FIRST = "an engine's first sweep";
    static final String NEXT = "its next sweep";

    @Override
    public String name() {
        return "queue-retention";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        long size = run.config().historyTasks();
        run.tasks().reset();
        new HistoryLoader(run.admin(), run.db()).loadLogged(size, name());
        run.tasks().settle();
        List<Result> results = new ArrayList<>();
        List<Double> first = new ArrayList<>();
        List<Double> next = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            try (DbTasks engine = sweeper(run)) {
                Result r = sweep(run, engine, FIRST, size);
                results.add(r);
                first.add(r.seconds());
                r = sweep(run, engine, NEXT, size);
                results.add(r);
                next.add(r.seconds());
            }
        }
        Log.line("queue-retention: " + FIRST + ": " + Spread.summary(first, "%.3f s", "rounds") + "; " + NEXT + ": "
                + Spread.summary(next, "%.3f s", "rounds"));
        return results;
    }

    private static DbTasks sweeper(BenchRun run) {
        Duration kept = Duration.ofDays(KEPT_DAYS);
        return DbTasks.builder(run.admin())
                .workers(false)
                .migrate(false)
                .retention(TaskStatus.SUCCEEDED, kept)
                .retention(TaskStatus.FAILED, kept)
                .retention(TaskStatus.CANCELLED, kept)
                .retention(SHORT, TaskStatus.SUCCEEDED, Duration.ofHours(1))
                .build();
    }

    private Result sweep(BenchRun run, DbTasks engine, String what, long size) {
        String load = HistoryScenario.load();
        long start = System.nanoTime();
        long deleted = engine.sweepRetention();
        double seconds = (System.nanoTime() - start) / 1e9;
        String config = String.format(
                Locale.ROOT,
                "%s, queue %s SUCCEEDED kept 1 h, the rest %d days, history=%d, load %s: %d deleted",
                what,
                SHORT,
                KEPT_DAYS,
                size,
                load,
                deleted);
        Log.line(String.format(Locale.ROOT, "queue-retention: %s, %.3f s", config, seconds));
        return Result.plain(name(), run.db(), config, Math.max(1, deleted), seconds, null);
    }
}
