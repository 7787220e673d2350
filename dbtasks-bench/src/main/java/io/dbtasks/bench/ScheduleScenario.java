package io.dbtasks.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.schedule.Schedule;
import io.dbtasks.schedule.Trigger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Recurring schedules: {@code --schedules} schedules (default 10,000) on one cron (default every
 * minute), shared by {@code --schedule-engines} engines (default 3) in this JVM, each with its own
 * pool. All schedules start at the same slot; for each of {@code --schedule-rounds} consecutive slots
 * it measures when, after the slot, an observer polling every 20 ms first saw all slot tasks
 * committed (the figure, in the "seconds" column; within 20 ms plus one count query), and when the
 * last one was inserted (the database's {@code created_at}, the clock the slot is due by), and checks that every schedule got exactly one task for the slot (no duplicate, none
 * missing). The engines only enqueue (no workers), so the figure is the scheduler's alone.
 */
final class ScheduleScenario implements Scenario {
    private static final String KIND = "bench.slot";
    private static final String QUEUE = "bench-slots";
    private static final String PREFIX = "bench-slot-";

    @Override
    public String name() {
        return "schedules";
    }

    @Override
    public List<Result> run(BenchRun run) throws Exception {
        BenchConfig c = run.config();
        int n = c.schedules();
        Trigger trigger = Trigger.cron(c.scheduleCron());
        run.tasks().reset();
        deleteSchedules(run);
        List<HikariDataSource> pools = new ArrayList<>();
        List<DbTasks> engines = new ArrayList<>();
        List<Result> results = new ArrayList<>();
        try {
            for (int e = 0; e < c.scheduleEngines(); e++) {
                HikariDataSource ds = run.pool("bench-schedules-" + e, 4);
                pools.add(ds);
                engines.add(DbTasks.builder(ds)
                        .migrate(false)
                        .workers(false)
                        .scheduleBatch(c.scheduleBatch())
                        .workerId("bench-schedules-" + e)
                        .build());
            }
            // Every schedule's first slot is the same, far enough ahead for the creation to finish.
            Instant now = dbNow(run);
            Instant first =
                    trigger.nextSlot(now.plusMillis(Math.max(3_000L, 5L * n))).orElseThrow();
            long createStart = System.nanoTime();
            create(engines.get(0), n, trigger, first);
            Log.line(String.format(
                    Locale.ROOT,
                    "schedules: %d schedules on '%s' created in %.1f s; first slot %s",
                    n,
                    c.scheduleCron(),
                    (System.nanoTime() - createStart) / 1e9,
                    first));
            engines.forEach(DbTasks::start);
            double[] inserted = new double[c.scheduleRounds()];
            Instant slot = first;
            for (int round = 0; round < c.scheduleRounds(); round++) {
                Measured m = measure(run, slot, n);
                inserted[round] = m.observedMillis;
                Result r = Result.plain(
                        name(),
                        run.db(),
                        String.format(
                                Locale.ROOT,
                                "%d schedules, %d engines, batch %d, slot %d (last inserted at %+.0f ms)",
                                n,
                                c.scheduleEngines(),
                                c.scheduleBatch(),
                                round + 1,
                                m.lastInsertMillis),
                        n,
                        m.observedMillis / 1000.0,
                        null);
                Log.result(r);
                Log.line(String.format(
                        Locale.ROOT,
                        "schedules %s slot %s: %d tasks, one per schedule; last inserted %+.0f ms after the slot,"
                                + " first inserted %+.0f ms, all committed and seen at %+d ms",
                        run.db().id(),
                        slot,
                        n,
                        m.lastInsertMillis,
                        m.firstInsertMillis,
                        m.observedMillis));
                results.add(r);
                slot = trigger.nextSlot(slot).orElseThrow();
            }
            double[] sorted = inserted.clone();
            Arrays.sort(sorted);
            Log.line(String.format(
                    Locale.ROOT,
                    "schedules %s: every slot task committed and seen after the slot: median %.0f ms, min %.0f, max %.0f"
                            + " over %d slots",
                    run.db().id(),
                    sorted[sorted.length / 2],
                    sorted[0],
                    sorted[sorted.length - 1],
                    sorted.length));
        } finally {
            for (DbTasks e : engines) {
                e.stop(Duration.ofSeconds(10));
            }
            deleteSchedules(run);
            pools.forEach(HikariDataSource::close);
            run.tasks().reset();
        }
        return results;
    }

    private record Measured(double firstInsertMillis, double lastInsertMillis, long observedMillis) {}

    private static Measured measure(BenchRun run, Instant slot, int n) throws Exception {
        String count = "SELECT COUNT(*) AS tasks, COUNT(DISTINCT name) AS schedules, MIN(created_at) AS first_at,"
                + " MAX(created_at) AS last_at FROM dbtasks_task WHERE queue = ? AND run_at = ?";
        long deadline = slot.toEpochMilli() + 120_000;
        try (Connection c = run.admin().getConnection();
                PreparedStatement ps = c.prepareStatement(count)) {
            while (true) {
                long wait = slot.toEpochMilli() - System.currentTimeMillis();
                if (wait > 0) {
                    Thread.sleep(Math.min(wait, 20));
                    continue;
                }
                ps.setString(1, QUEUE);
                ps.setObject(2, timestamp(run, slot));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    long tasks = rs.getLong("tasks");
                    long observed = System.currentTimeMillis() - slot.toEpochMilli();
                    if (tasks >= n) {
                        if (tasks != n || rs.getLong("schedules") != n) {
                            throw new IllegalStateException("slot " + slot + ": " + tasks + " tasks for "
                                    + rs.getLong("schedules") + " schedules; expected exactly one each of " + n);
                        }
                        Instant firstAt = instant(run, rs, "first_at");
                        Instant lastAt = instant(run, rs, "last_at");
                        return new Measured(
                                Duration.between(slot, firstAt).toNanos() / 1e6,
                                Duration.between(slot, lastAt).toNanos() / 1e6,
                                observed);
                    }
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("slot " + slot + ": not every schedule's task within 120 s");
                }
                Thread.sleep(20);
            }
        }
    }

    private static Object timestamp(BenchRun run, Instant t) {
        return run.db() == Database.MARIADB
                ? java.time.LocalDateTime.ofInstant(t, java.time.ZoneOffset.UTC)
                : t.atOffset(java.time.ZoneOffset.UTC);
    }

    private static Instant instant(BenchRun run, ResultSet rs, String column) throws SQLException {
        if (run.db() == Database.MARIADB) {
            return rs.getObject(column, java.time.LocalDateTime.class).toInstant(java.time.ZoneOffset.UTC);
        }
        return rs.getObject(column, java.time.OffsetDateTime.class).toInstant();
    }

    private static Instant dbNow(BenchRun run) throws SQLException {
        try (Connection c = run.admin().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT " + run.db().now())) {
            rs.next();
            return run.db() == Database.MARIADB
                    ? rs.getObject(1, java.time.LocalDateTime.class).toInstant(java.time.ZoneOffset.UTC)
                    : rs.getObject(1, java.time.OffsetDateTime.class).toInstant();
        }
    }

    /** Creates the schedules through the API, on 8 threads. */
    private static void create(DbTasks engine, int n, Trigger trigger, Instant first) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int from = t;
                done.add(pool.submit(() -> {
                    for (int i = from; i < n; i += 8) {
                        engine.schedules()
                                .create(Schedule.builder(PREFIX + i, trigger)
                                        .task(KIND)
                                        .queue(QUEUE)
                                        .startAt(first)
                                        .build());
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
    }

    private static void deleteSchedules(BenchRun run) throws SQLException {
        try (Connection c = run.admin().getConnection();
                PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_schedule WHERE name LIKE ?")) {
            ps.setString(1, PREFIX + "%");
            ps.executeUpdate();
        }
    }
}
