package io.dbtasks.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * Where the CPU went during a measurement: the CPU time of the JVMs that ran the engines (this one,
 * or the child JVMs) and how busy the whole machine was (Linux {@code /proc/stat}; elsewhere not
 * given). On a machine with few cores a burn-down is CPU-bound, and a second JVM's own claim loop,
 * completion writer, GC and JIT threads take CPU from the database; these figures show it.
 */
final class CpuMeter {
    private final List<ProcessHandle> processes;
    private final long startNanos = System.nanoTime();
    private final long startCpuNanos;
    private final long[] startMachine;
    private final BenchRun run;
    private final long startCommits;

    /**
     * @param run the run, whose database is asked for its commit count on PostgreSQL
     * @param processes the engines' JVMs; empty for this JVM
     */
    CpuMeter(BenchRun run, List<ProcessHandle> processes) {
        this.run = run;
        this.processes = processes;
        this.startCommits = commits();
        this.startCpuNanos = cpuNanos();
        this.startMachine = machine();
    }

    /**
     * @return the database's committed transactions ({@code pg_stat_database.xact_commit}) on
     *     PostgreSQL, -1 elsewhere or if it cannot be read
     */
    private long commits() {
        if (run.db() != Database.POSTGRESQL) {
            return -1;
        }
        try (java.sql.Connection c = run.admin().getConnection();
                java.sql.Statement s = c.createStatement();
                java.sql.ResultSet rs =
                        s.executeQuery("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")) {
            return rs.next() ? rs.getLong(1) : -1;
        } catch (java.sql.SQLException e) {
            return -1;
        }
    }

    private long cpuNanos() {
        if (processes.isEmpty()) {
            java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
                return sun.getProcessCpuTime();
            }
            return 0;
        }
        long sum = 0;
        for (ProcessHandle p : processes) {
            sum += p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
        }
        return sum;
    }

    /** @return busy and total jiffies of all cores, or {@code null} off Linux */
    private static long[] machine() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long total = 0;
            for (int i = 1; i < f.length; i++) {
                total += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new long[] {total - idle, total};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** @return a line on the CPU used since construction by {@code tasks} tasks */
    String summary(String what, long tasks) {
        double wall = (System.nanoTime() - startNanos) / 1e9;
        double jvm = (cpuNanos() - startCpuNanos) / 1e9;
        long[] end = machine();
        String busy = startMachine == null || end == null || end[1] == startMachine[1]
                ? ""
                : String.format(
                        Locale.ROOT,
                        ", machine %.0f %% busy over %d cores",
                        100.0 * (end[0] - startMachine[0]) / (end[1] - startMachine[1]),
                        Runtime.getRuntime().availableProcessors());
        String commits = "";
        if (startCommits >= 0) {
            try {
                Thread.sleep(1100); // PostgreSQL 15 flushes a backend's statistics at most once a second
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            long endCommits = commits();
            if (endCommits >= 0) {
                commits = String.format(
                        Locale.ROOT,
                        ", %.2f commits per task in the database (all its clients)",
                        (endCommits - startCommits) / (double) Math.max(1, tasks));
            }
        }
        return String.format(
                Locale.ROOT,
                "%s: engine JVM(s) used %.2f s CPU in %.2f s (%.0f us per task)%s%s",
                what,
                jvm,
                wall,
                jvm * 1e6 / Math.max(1, tasks),
                busy,
                commits);
    }
}
