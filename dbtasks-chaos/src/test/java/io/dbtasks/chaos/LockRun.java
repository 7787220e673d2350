package io.dbtasks.chaos;

import com.zaxxer.hikari.HikariDataSource;
import io.dbtasks.DbTasks;
import io.dbtasks.testing.SecondProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The lock workload: two {@link LockWorker} processes of four threads each for {@code seconds};
 * every few seconds the process holding the lock (else either) is paused ({@code SIGSTOP}) for
 * {@link #PAUSE}; then the {@link LockChecker}.
 */
final class LockRun {
    static final Duration LEASE = Duration.ofMillis(500);
    /**
     * Past the lease and past the waiting line's ticket lifetime (3 s): shorter, the paused
     * process's own waiters keep their place in the line and nobody else may take over.
     */
    static final Duration PAUSE = Duration.ofMillis(4_500);

    private LockRun() {}

    static Map<String, Long> run(String url, int seconds) throws Exception {
        return run(url, List.of(url, url), seconds);
    }

    /**
     * @param url where the test itself migrates, watches and checks
     * @param processUrls the URL of each of the two lock processes (two nodes of a cluster, say)
     */
    static Map<String, Long> run(String url, List<String> processUrls, int seconds) throws Exception {
        try (HikariDataSource ds = ChaosRun.pool(url, 4)) {
            DbTasks.builder(ds).workers(false).build().close(); // migrates
            ChaosSchema.recreate(ds);
            try (var c = ds.getConnection();
                    var s = c.createStatement()) {
                s.executeUpdate("DELETE FROM dbtasks_lock");
                s.executeUpdate("DELETE FROM dbtasks_lock_waiter");
            }
            String classpath = ChaosFixtures.classpath();
            String java = ChaosFixtures.java();
            List<Process> processes = new ArrayList<>();
            List<List<String>> outputs = new ArrayList<>();
            Map<String, Long> figures = new LinkedHashMap<>();
            long pauses = 0;
            try {
                for (int i = 0; i < 2; i++) {
                    Process p = new ProcessBuilder(
                                    java,
                                    "-Xmx192m",
                                    "-cp",
                                    classpath,
                                    LockWorker.class.getName(),
                                    processUrls.get(i),
                                    "lock-p" + i,
                                    "4",
                                    String.valueOf(seconds),
                                    String.valueOf(LEASE.toMillis()))
                            .redirectErrorStream(true)
                            .start();
                    processes.add(p);
                    List<String> lines = new ArrayList<>();
                    outputs.add(lines);
                    Thread reader = new Thread(() -> read(p, lines), "lock-output-" + i);
                    reader.setDaemon(true);
                    reader.start();
                }
                Random random = new Random();
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds - 3);
                Thread.sleep(3_000);
                while (System.nanoTime() < end) {
                    Process p = processes.get(holder(ds).orElse(random.nextInt(2)));
                    signal(p, "STOP");
                    Thread.sleep(PAUSE.toMillis());
                    signal(p, "CONT");
                    pauses++;
                    Thread.sleep(1_500 + random.nextInt(1_500));
                }
                for (int i = 0; i < 2; i++) {
                    Process p = processes.get(i);
                    if (!p.waitFor(seconds + 60L, TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                        throw new AssertionError("lock process " + i + " did not finish: " + outputs.get(i));
                    }
                    String line;
                    synchronized (outputs.get(i)) {
                        line = outputs.get(i).stream()
                                .filter(l -> l.startsWith("FIGURES "))
                                .findFirst()
                                .orElseThrow(() -> new AssertionError("no FIGURES from lock process: " + outputs));
                    }
                    figures = SecondProcess.sum(figures, SecondProcess.parse(line.substring("FIGURES ".length())));
                }
            } finally {
                // none left running, nor stopped, when the run ends early (a failure, a timeout's interrupt)
                processes.forEach(Process::destroyForcibly);
            }
            figures.put("pauses", pauses);
            figures.putAll(LockChecker.check(ds));
            System.out.println("chaos[locks] " + url.replaceAll("\\?.*", "") + " " + figures);
            return figures;
        }
    }

    /** @return the index of the process holding the lock now, if any */
    private static java.util.Optional<Integer> holder(HikariDataSource ds) throws java.sql.SQLException {
        try (var c = ds.getConnection();
                var s = c.createStatement();
                var rs = s.executeQuery("SELECT owner FROM dbtasks_lock WHERE name = '" + LockWorker.LOCK + "'")) {
            if (rs.next()) {
                String owner = rs.getString(1);
                for (int i = 0; i < 2; i++) {
                    if (owner.startsWith("lock-p" + i + "/")) {
                        return java.util.Optional.of(i);
                    }
                }
            }
            return java.util.Optional.empty();
        }
    }

    private static void read(Process p, List<String> lines) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String l;
            while ((l = r.readLine()) != null) {
                synchronized (lines) {
                    lines.add(l);
                }
            }
        } catch (IOException e) {
            // ended
        }
    }

    private static void signal(Process p, String signal) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + signal, String.valueOf(p.pid()))
                .inheritIO()
                .start()
                .waitFor(10, TimeUnit.SECONDS);
    }
}
