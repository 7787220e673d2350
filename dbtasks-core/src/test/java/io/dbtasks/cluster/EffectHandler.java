package io.dbtasks.cluster;

import io.dbtasks.TaskContext;
import io.dbtasks.TaskHandler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.sql.DataSource;

/**
 * The cluster test's work: one row into {@code cluster_effect} per run, a table with no unique
 * constraint, so a task that ran twice shows up as two rows.
 */
final class EffectHandler implements TaskHandler<Void> {
    static final String KIND = "cluster.effect";
    static final String QUEUE = "cluster";

    private final DataSource dataSource;

    EffectHandler(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    static void createTable(DataSource ds) throws Exception {
        try (Connection c = ds.getConnection();
                var s = c.createStatement()) {
            try {
                s.executeUpdate("DROP TABLE cluster_effect");
            } catch (Exception absent) {
                // first run
            }
            s.executeUpdate("CREATE TABLE cluster_effect (task_id BIGINT NOT NULL, token BIGINT NOT NULL,"
                    + " worker VARCHAR(200) NOT NULL)");
        }
    }

    @Override
    public void handle(TaskContext ctx, Void payload) throws Exception {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps =
                        c.prepareStatement("INSERT INTO cluster_effect (task_id, token, worker) VALUES (?, ?, ?)")) {
            ps.setLong(1, ctx.taskId());
            ps.setLong(2, ctx.fencingToken());
            ps.setString(3, ctx.workerId());
            ps.executeUpdate();
        }
    }
}
