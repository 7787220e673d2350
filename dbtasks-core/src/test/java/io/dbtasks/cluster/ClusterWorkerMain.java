package io.dbtasks.cluster;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.TaskFilter;
import io.dbtasks.TaskStatus;
import java.time.Duration;

/**
 * A worker process for the cluster test: runs one engine on the given JDBC URL until the cluster
 * queue has nothing PENDING or RUNNING (or {@code maxSeconds} pass), then stops gracefully.
 *
 * <p>Arguments: JDBC URL, worker id, max seconds.
 */
public final class ClusterWorkerMain {
    private ClusterWorkerMain() {}

    public static void main(String[] args) throws Exception {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(args[0]);
        hc.setMaximumPoolSize(12);
        long deadline =
                System.nanoTime() + Duration.ofSeconds(Long.parseLong(args[2])).toNanos();
        try (HikariDataSource ds = new HikariDataSource(hc)) {
            DbTasks engine = ClusterTest.engine(ds, args[1]);
            engine.start();
            System.out.println("READY " + args[1]);
            int idle = 0;
            while (System.nanoTime() < deadline && idle < 3) {
                Thread.sleep(500);
                long open = engine.list(new TaskFilter(TaskStatus.PENDING, EffectHandler.QUEUE, null), 0, 1)
                                .total()
                        + engine.list(new TaskFilter(TaskStatus.RUNNING, EffectHandler.QUEUE, null), 0, 1)
                                .total();
                idle = open == 0 ? idle + 1 : 0;
            }
            engine.stop(Duration.ofSeconds(10));
            System.out.println("DONE " + args[1]);
        }
    }
}
