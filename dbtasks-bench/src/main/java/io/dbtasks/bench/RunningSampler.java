package io.dbtasks.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * Counts the RUNNING tasks in the database, every {@value #EVERY_MILLIS} ms on a connection of its
 * own, while a burn-down runs: in all, and those of the key with the most. A task counts against its
 * key's limit from its claim until its outcome is written, so these are what a limit sees, whatever
 * the engine's handlers are doing. Not thread-safe: one burn-down at a time.
 */
final class RunningSampler implements AutoCloseable {
    static final long EVERY_MILLIS = 50;
    private static final String COUNT = "SELECT COALESCE(SUM(n), 0), COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) AS n"
            + " FROM dbtasks_task WHERE queue = '" + TaskTable.QUEUE + "' AND status = 'RUNNING'"
            + " GROUP BY concurrency_key) r";

    /** One sample: RUNNING tasks in all, and of the key with the most (a task without a key is one key). */
    record Sample(long running, long mostOfAKey) {}

    private final Thread thread;
    private final List<Sample> samples = new ArrayList<>();
    private volatile boolean sampling = true;
    private volatile SQLException failure;

    /**
     * Starts sampling.
     *
     * @param ds where the tasks are; one of its connections is held until {@link #close}
     */
    RunningSampler(DataSource ds) {
        thread = new Thread(() -> sample(ds), "bench-running-sampler");
        thread.setDaemon(true);
        thread.start();
    }

    private void sample(DataSource ds) {
        try (Connection c = ds.getConnection();
                PreparedStatement ps = c.prepareStatement(COUNT)) {
            while (sampling) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    Sample s = new Sample(rs.getLong(1), rs.getLong(2));
                    synchronized (samples) {
                        samples.add(s);
                    }
                }
                Thread.sleep(EVERY_MILLIS);
            }
        } catch (SQLException e) {
            failure = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops sampling.
     *
     * @throws IllegalStateException if a count failed
     */
    @Override
    public void close() {
        sampling = false;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (failure != null) {
            throw new IllegalStateException("Counting the RUNNING tasks failed", failure);
        }
    }

    /**
     * @return the samples taken so far that found a task RUNNING, in order: the burn-down's engine
     *     starts and stops within the sampled time, and before its first claim and after the queue is
     *     drained nothing runs
     */
    List<Sample> samples() {
        synchronized (samples) {
            return samples.stream().filter(s -> s.running() > 0).toList();
        }
    }
}
