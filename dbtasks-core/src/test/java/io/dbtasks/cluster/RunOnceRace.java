package io.dbtasks.cluster;

import io.dbtasks.once.RunOnceGuards;
import io.dbtasks.once.RunOnceResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * The run-once race: every thread of every process calls {@code runOnce} for every key, the
 * threads of one process in the same order, so each key is raced by all of them at once; the
 * second process goes through the keys in reverse, so that the processes lead on different keys
 * and race each other where they meet (a process that merely started later would only find keys
 * done). The work inserts one row into {@code
 * once_effect}, a table without a unique constraint, so a key whose work ran twice shows two rows.
 */
public final class RunOnceRace {
    private RunOnceRace() {}

    /** Drops and creates {@code once_effect}. */
    public static void createTable(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            try {
                s.executeUpdate("DROP TABLE once_effect");
            } catch (SQLException absent) {
                // first run
            }
            s.executeUpdate("CREATE TABLE once_effect (once_key VARCHAR(100) NOT NULL, token BIGINT NOT NULL,"
                    + " runner VARCHAR(200) NOT NULL)");
        }
    }

    /**
     * Runs a few keys of this process's own, so that class loading, JIT and the connection pool do
     * not hand the race to whichever process started first.
     */
    public static void warmUp(RunOnceGuards guards, String process) {
        for (int i = 0; i < 20; i++) {
            guards.runOnce("warm-up-" + process + "-" + i, Duration.ofSeconds(10), lease -> {});
        }
    }

    /** @return one count per {@link RunOnceResult.Outcome}, by name */
    public static Map<String, Long> run(RunOnceGuards guards, DataSource ds, int threads, int keys, boolean reverse)
            throws Exception {
        Map<RunOnceResult.Outcome, AtomicLong> outcomes = new EnumMap<>(RunOnceResult.Outcome.class);
        for (RunOnceResult.Outcome o : RunOnceResult.Outcome.values()) {
            outcomes.put(o, new AtomicLong());
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < keys; i++) {
                        int k = reverse ? keys - 1 - i : i;
                        RunOnceResult r = guards.runOnce("race-" + k, Duration.ofSeconds(10), lease -> {
                            try (Connection c = ds.getConnection();
                                    PreparedStatement ps = c.prepareStatement(
                                            "INSERT INTO once_effect (once_key, token, runner) VALUES (?, ?, ?)")) {
                                ps.setString(1, lease.name());
                                ps.setLong(2, lease.token());
                                ps.setString(3, lease.owner());
                                ps.executeUpdate();
                            }
                            Thread.sleep(3);
                        });
                        outcomes.get(r.outcome()).incrementAndGet();
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        Map<String, Long> figures = new LinkedHashMap<>();
        outcomes.forEach((o, n) -> figures.put(o.name(), n.get()));
        return figures;
    }
}
