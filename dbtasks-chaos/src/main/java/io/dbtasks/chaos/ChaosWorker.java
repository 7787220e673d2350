package io.dbtasks.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;

/**
 * A chaos worker process: one engine working queue {@value ChaosSchema#QUEUE} until its standard
 * input says {@code STOP} or closes, then a graceful stop. The parent kills it, stops it ({@code
 * SIGSTOP}), cuts its network or its database connections at will.
 *
 * <p>Arguments: JDBC URL, worker id, concurrency, lease in milliseconds, and optionally {@code true},
 * {@code false} or {@code detect} (null) for {@link DbTasks.Builder#transactionPooling(Boolean)}
 * (default {@code false}: the chaos TCP proxy is no pooler), then optionally {@code intervals}: the
 * limits workload, whose transactional handler records its run's interval by the database clock
 * (see {@link ChaosSchema}).
 */
public final class ChaosWorker {
    private ChaosWorker() {}

    /**
     * @param args JDBC URL, worker id, concurrency, lease (ms), transaction pooling (optional: {@code
     *     true}, {@code false} or {@code detect}), {@code intervals} (optional)
     * @throws Exception if the engine cannot start
     */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String workerId = args[1];
        int concurrency = Integer.parseInt(args[2]);
        Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
        Boolean transactionPooling = args.length <= 4
                ? Boolean.FALSE
                : args[4].equals("detect") ? null : Boolean.valueOf(Boolean.parseBoolean(args[4]));
        boolean intervals = args.length > 5 && args[5].equals("intervals");
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(url);
        hc.setMaximumPoolSize(concurrency + 6);
        hc.setConnectionTimeout(2_000);
        hc.setValidationTimeout(1_000);
        hc.setInitializationFailTimeout(-1); // start even if the database is down right now
        hc.setPoolName(workerId);
        try (HikariDataSource ds = new HikariDataSource(hc)) {
            DbTasks engine = null;
            while (engine == null) { // as a supervisor would restart a worker that cannot start yet
                try {
                    engine = engine(ds, workerId, concurrency, lease, transactionPooling, intervals);
                    engine.start();
                } catch (RuntimeException e) {
                    System.out.println("cannot start yet (" + e.getMessage() + "); again in 500 ms");
                    if (engine != null) {
                        engine.close();
                        engine = null;
                    }
                    Thread.sleep(500);
                }
            }
            System.out.println("READY " + workerId);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null && !line.equals("STOP")) {
                // work until told to stop
            }
            engine.stop(Duration.ofSeconds(10));
            System.out.println("STOPPED " + workerId);
        }
        System.exit(0);
    }

    /**
     * The chaos engine: both chaos kinds, short timeouts so faults are found fast.
     *
     * @param ds the pool
     * @param workerId the worker id
     * @param concurrency handlers at once
     * @param lease the task lease
     * @param transactionPooling whether a transaction pooler sits in front of PostgreSQL, null to
     *     let the engine detect it
     * @param intervals whether the transactional handler records its interval (the limits workload)
     * @return the engine, not started
     */
    public static DbTasks engine(
            DataSource ds,
            String workerId,
            int concurrency,
            Duration lease,
            Boolean transactionPooling,
            boolean intervals) {
        return DbTasks.builder(ds)
                .workerId(workerId)
                .migrate(false) // the enqueuer migrated
                .transactionPooling(transactionPooling)
                .queue(ChaosSchema.QUEUE, concurrency)
                .lease(lease)
                .pollInterval(Duration.ofMillis(100))
                .rescueInterval(Duration.ofMillis(500))
                .statementTimeout(Duration.ofSeconds(5))
                .shutdownTimeout(Duration.ofSeconds(10))
                .transactionalHandler(ChaosSchema.TX_KIND, Void.class, (ctx, tx, payload) -> {
                    witness(ctx);
                    if (intervals) {
                        timedEffect(ds, ctx, tx);
                        return;
                    }
                    try (PreparedStatement ps =
                            tx.prepareStatement("INSERT INTO chaos_effect (task_id, token, worker) VALUES (?, ?, ?)")) {
                        ps.setLong(1, ctx.taskId());
                        ps.setLong(2, ctx.fencingToken());
                        ps.setString(3, ctx.workerId());
                        ps.executeUpdate();
                    }
                    work();
                })
                .handler(ChaosSchema.PLAIN_KIND, Void.class, (ctx, payload) -> {
                    witness(ctx);
                    work();
                    try (Connection c = ds.getConnection();
                            PreparedStatement ps = c.prepareStatement(
                                    "INSERT INTO chaos_plain_effect (task_id, token, worker) VALUES (?, ?, ?)")) {
                        ps.setLong(1, ctx.taskId());
                        ps.setLong(2, ctx.fencingToken());
                        ps.setString(3, ctx.workerId());
                        ps.executeUpdate();
                    }
                })
                .build();
    }

    /**
     * Writes {@code RAN <task id> <fencing token> <idempotency key>} to standard output (the worker's
     * log), a record outside the database: after a failover that lost committed transactions, it
     * still shows which token a handler was given for which task, so a token or id issued again to
     * another task can be counted.
     */
    private static void witness(io.dbtasks.TaskContext ctx) {
        System.out.println("RAN " + ctx.taskId() + " " + ctx.fencingToken() + " "
                + ctx.idempotencyKey().orElse("-"));
    }

    /**
     * The limits workload's run: its start by the database clock (read on the engine's transaction,
     * which began after the claim committed), the work, its end by the same clock, then the effect
     * with both in the engine's transaction (it commits only if the fencing token still holds) and
     * the same interval on a connection of its own (it lands whatever the token says).
     */
    private static void timedEffect(DataSource ds, io.dbtasks.TaskContext ctx, Connection tx) throws Exception {
        String clock = clockMicros(tx);
        long start = micros(tx, clock);
        work();
        long end = micros(tx, clock);
        for (String table : java.util.List.of("chaos_effect", "chaos_interval")) {
            try (Connection own = table.equals("chaos_effect") ? null : ds.getConnection();
                    PreparedStatement ps = (own == null ? tx : own)
                            .prepareStatement("INSERT INTO " + table
                                    + " (task_id, token, worker, started_us, ended_us) VALUES (?, ?, ?, ?, ?)")) {
                ps.setLong(1, ctx.taskId());
                ps.setLong(2, ctx.fencingToken());
                ps.setString(3, ctx.workerId());
                ps.setLong(4, start);
                ps.setLong(5, end);
                ps.executeUpdate();
            }
        }
    }

    /**
     * @return a query of the database's clock now in microseconds since the epoch, the clock of the
     *     statement and not of the transaction's start
     */
    static String clockMicros(Connection c) throws java.sql.SQLException {
        return c.getMetaData()
                        .getDatabaseProductName()
                        .toLowerCase(java.util.Locale.ROOT)
                        .contains("postgres")
                ? "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"
                : "SELECT CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)";
    }

    private static long micros(Connection c, String clock) throws java.sql.SQLException {
        try (PreparedStatement ps = c.prepareStatement(clock);
                java.sql.ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** 50 to 250 ms of work, so that tasks are in flight when a fault strikes. */
    private static void work() throws InterruptedException {
        Thread.sleep(50 + ThreadLocalRandom.current().nextInt(200));
    }
}
