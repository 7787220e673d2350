package io.dbtasks.cluster;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.testing.SecondProcess;
import java.time.Duration;
import java.util.Map;

/**
 * The second process of {@link ToolkitClusterTest}: runs one scenario with 8 threads against the
 * given database and prints its figures.
 *
 * <p>Arguments: {@code lock <jdbc-url> <process> <seconds>} or {@code runonce <jdbc-url> <process>
 * <keys>}.
 */
public final class ToolkitWorkerMain {
    static final int THREADS = 8;

    private ToolkitWorkerMain() {}

    public static void main(String[] args) throws Exception {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(args[1]);
        hc.setMaximumPoolSize(THREADS + 4);
        try (HikariDataSource ds = new HikariDataSource(hc);
                DbTasks tasks = DbTasks.builder(ds)
                        .workers(false)
                        .migrate(false)
                        .workerId(args[2])
                        .build()) {
            if (args[0].equals("runonce")) {
                RunOnceRace.warmUp(tasks.guards(), args[2]);
            }
            SecondProcess.awaitGo();
            long param = Long.parseLong(args[3]);
            Map<String, Long> figures = switch (args[0]) {
                case "lock" -> LockCounter.run(tasks.locks(), ds, args[2], THREADS, Duration.ofSeconds(param));
                case "runonce" -> RunOnceRace.run(tasks.guards(), ds, THREADS, (int) param, true);
                default -> throw new IllegalArgumentException("unknown scenario " + args[0]);
            };
            System.out.println("FIGURES " + SecondProcess.format(figures));
        }
        System.exit(0);
    }
}
