package io.dbtasks.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * The state of one run: its configuration, the database, a small admin pool for setup and counts,
 * and what scenarios leave behind for the report besides their rows (latency samples, soak
 * windows). Each scenario takes pools of its own sized for its workers and closes them.
 */
final class BenchRun implements AutoCloseable {
    private final BenchConfig config;
    private final Database db;
    private final HikariDataSource admin;
    private final TaskTable tasks;
    private final List<double[]> latencySamples = new ArrayList<>();
    private final List<SoakWindow> soakWindows = new ArrayList<>();
    private final java.util.Set<String> warmed = new java.util.HashSet<>();

    BenchRun(BenchConfig config) {
        this.config = config;
        this.db = Database.of(config.url());
        this.admin = pool("bench-admin", 4);
        this.tasks = new TaskTable(admin, db);
    }

    BenchConfig config() {
        return config;
    }

    Database db() {
        return db;
    }

    TaskTable tasks() {
        return tasks;
    }

    DataSource admin() {
        return admin;
    }

    /** Creates the dbtasks schema if it is missing, with a producer-only engine. */
    void migrate() {
        DbTasks.builder(admin).workers(false).build().close();
    }

    /** @return a new pool of {@code size} connections, which the caller closes */
    HikariDataSource pool(String name, int size) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(config.url());
        if (config.user() != null) {
            c.setUsername(config.user());
        }
        if (config.password() != null) {
            c.setPassword(config.password());
        }
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(size);
        c.setPoolName(name);
        c.setConnectionTimeout(30_000);
        // The database may be at its connection limit for a while (other clients on a shared
        // server): keep trying for a minute instead of failing the run.
        c.setInitializationFailTimeout(60_000);
        HikariDataSource ds = new HikariDataSource(c);
        awaitFull(ds, size);
        return ds;
    }

    /** Waits (up to 10 s) until the pool has opened all its connections, so no measurement pays for it. */
    private static void awaitFull(HikariDataSource ds, int size) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (ds.getHikariPoolMXBean().getTotalConnections() < size && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** @return whether burn-down may spread over child processes: not for an in-memory H2 */
    boolean allowsProcesses() {
        return !config.url().toLowerCase(Locale.ROOT).startsWith("jdbc:h2:mem:");
    }

    void addLatencySamples(double[] sortedMillis) {
        latencySamples.add(sortedMillis);
    }

    List<double[]> latencySamples() {
        return latencySamples;
    }

    /**
     * Whether {@code what} (an engine or a peer) still needs its warm-up in this JVM: {@code true} the
     * first time it is asked for each {@code what}, {@code false} after.
     */
    boolean needsWarmUp(String what) {
        return warmed.add(what);
    }

    void addSoakWindow(SoakWindow window) {
        soakWindows.add(window);
    }

    List<SoakWindow> soakWindows() {
        return soakWindows;
    }

    @Override
    public void close() {
        admin.close();
    }

    /**
     * Throughput of one soak window.
     *
     * @param endSecond seconds since the soak started, at the window's end
     * @param tasks tasks finished in the window
     * @param seconds the window's length
     */
    record SoakWindow(double endSecond, long tasks, double seconds) {
        double tasksPerSecond() {
            return tasks / seconds;
        }
    }
}
