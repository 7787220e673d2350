package io.dbtasks.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A child JVM of a multi-process burn-down. It builds one engine and prints {@code READY}, starts
 * it when the parent writes {@code GO}, and stops it and exits on {@code STOP} or end of input, so a
 * parent that dies takes its children with it. Building before GO keeps JVM start-up and pool
 * creation out of the measurement. Before GO the parent may send {@code WARM}: the child then starts
 * a second engine on the warm-up queue ({@link #WARMUP_QUEUE}), whose tasks the parent has stored,
 * and on {@code COOL} stops it and prints {@code COOLED}; the JIT has then compiled the claim and
 * completion paths, as it has in a parent JVM that measured before.
 *
 * <p>Arguments: JDBC URL, concurrency, claim batch, poll interval in ms. User and password come
 * from {@code DBTASKS_BENCH_USER} and {@code DBTASKS_BENCH_PASSWORD}, not the command line.
 */
public final class WorkerProcess {
    static final String USER_ENV = "DBTASKS_BENCH_USER";
    static final String PASSWORD_ENV = "DBTASKS_BENCH_PASSWORD";
    /** The queue of the no-op tasks a child burns to warm up, apart from the measured queue. */
    static final String WARMUP_QUEUE = "bench-warmup";

    private WorkerProcess() {}

    public static void main(String[] args) throws Exception {
        int concurrency = Integer.parseInt(args[1]);
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(args[0]);
        hc.setUsername(System.getenv(USER_ENV));
        hc.setPassword(System.getenv(PASSWORD_ENV));
        hc.setMaximumPoolSize(Engines.poolSize(concurrency));
        hc.setMinimumIdle(Engines.poolSize(concurrency));
        AtomicLong handled = new AtomicLong();
        try (HikariDataSource ds = new HikariDataSource(hc)) {
            DbTasks engine = Engines.noop(
                    ds, Integer.parseInt(args[2]), Duration.ofMillis(Long.parseLong(args[3])), concurrency, handled);
            System.out.println("READY");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            DbTasks warmup = null;
            for (String line = in.readLine(); line != null && !line.equals("STOP"); line = in.readLine()) {
                if (line.equals("GO")) {
                    engine.start();
                } else if (line.equals("WARM")) {
                    warmup = DbTasks.builder(ds)
                            .migrate(false)
                            .queue(WARMUP_QUEUE, concurrency)
                            .claimBatch(Integer.parseInt(args[2]))
                            .pollInterval(Duration.ofMillis(Long.parseLong(args[3])))
                            .handler(TaskTable.KIND, Void.class, (context, payload) -> {})
                            .build();
                    warmup.start();
                } else if (line.equals("COOL") && warmup != null) {
                    warmup.stop(Duration.ofSeconds(10));
                    warmup = null;
                    System.out.println("COOLED");
                    System.out.flush();
                }
            }
            engine.stop(Duration.ofSeconds(10));
            System.out.println("DONE " + handled.get());
            System.out.flush();
        }
    }
}
