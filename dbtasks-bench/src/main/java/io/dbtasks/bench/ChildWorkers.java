package io.dbtasks.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A burn-down spread over child JVMs running {@link WorkerProcess} on this JVM's class path. The
 * parent waits until every child is READY, warms them up (unless {@link Workload#childWarmupTasks()}
 * is 0: each child burns that many no-op tasks of a queue of its own, so the measured run does not
 * pay for a cold JIT that a parent JVM measuring in-process has long since warmed), sends GO to all,
 * and times until the table shows nothing open; then it sends STOP.
 */
final class ChildWorkers {
    private final BenchRun run;

    ChildWorkers(BenchRun run) {
        this.run = run;
    }

    /** @return seconds from GO until the bench queue is drained */
    double burn(int workers, int processes, long expected) throws Exception {
        int perProcess = Math.max(1, (workers + processes - 1) / processes);
        List<Child> children = new ArrayList<>();
        try {
            for (int i = 0; i < processes; i++) {
                children.add(new Child(start(perProcess)));
            }
            for (Child child : children) {
                child.awaitReady();
            }
            warmUp(children, run.config().workload().childWarmupTasks());
            CpuMeter cpu = new CpuMeter(
                    run, children.stream().map(ch -> ch.process.toHandle()).toList());
            long start = System.nanoTime();
            for (Child child : children) {
                child.send("GO");
            }
            run.tasks().awaitDrained(5, Burner.timeoutMillis(expected));
            double seconds = (System.nanoTime() - start) / 1e9;
            Log.line(cpu.summary("W=" + workers + " P=" + processes + " (child JVMs)", expected));
            return seconds;
        } finally {
            for (Child child : children) {
                child.stop();
            }
        }
    }

    /** Has every child burn {@code perChild} no-op tasks of the warm-up queue, and waits for it. */
    private void warmUp(List<Child> children, int perChild) throws Exception {
        if (perChild <= 0) {
            return;
        }
        long n = (long) perChild * children.size();
        long start = System.nanoTime();
        WorkloadTasks.insert(run, WorkerProcess.WARMUP_QUEUE, TaskTable.KIND, n, WorkloadTasks.DEFAULT_BACKOFF);
        for (Child child : children) {
            child.send("WARM");
        }
        String open = "queue = '" + WorkerProcess.WARMUP_QUEUE + "' AND status IN ('PENDING', 'RUNNING')";
        long deadline = System.nanoTime() + Burner.timeoutMillis(n) * 1_000_000;
        while (run.tasks().count(open) > 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("worker processes did not burn their warm-up tasks in time");
            }
            Thread.sleep(20);
        }
        for (Child child : children) {
            child.send("COOL");
        }
        for (Child child : children) {
            child.awaitCooled();
        }
        WorkloadTasks.delete(run, WorkerProcess.WARMUP_QUEUE);
        Log.line(String.format(
                java.util.Locale.ROOT,
                "worker processes: %d warmed up on %d tasks in %.1f s",
                children.size(),
                n,
                (System.nanoTime() - start) / 1e9));
    }

    private Process start(int concurrency) throws IOException {
        BenchConfig c = run.config();
        List<String> command = List.of(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m",
                "-cp",
                classpath(),
                WorkerProcess.class.getName(),
                c.url(),
                String.valueOf(concurrency),
                String.valueOf(c.claimBatch()),
                String.valueOf(c.pollInterval().toMillis()));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        if (c.user() != null) {
            pb.environment().put(WorkerProcess.USER_ENV, c.user());
        }
        if (c.password() != null) {
            pb.environment().put(WorkerProcess.PASSWORD_ENV, c.password());
        }
        return pb.start();
    }

    /**
     * This JVM's class path. Under {@code mvn exec:java} the application runs in a URLClassLoader
     * inside Maven's JVM, whose own {@code java.class.path} is Maven's.
     */
    static String classpath() {
        if (Thread.currentThread().getContextClassLoader() instanceof URLClassLoader loader
                && loader.getURLs().length > 0) {
            return Arrays.stream(loader.getURLs())
                    .map(url -> {
                        try {
                            return Path.of(url.toURI()).toString();
                        } catch (Exception e) {
                            throw new IllegalStateException("Class path entry " + url + " is not a file", e);
                        }
                    })
                    .collect(Collectors.joining(File.pathSeparator));
        }
        return System.getProperty("java.class.path");
    }

    /** One child: its process, a reader of its output, and READY as a latch. */
    private static final class Child {
        private final Process process;
        private final Writer stdin;
        private final CountDownLatch ready = new CountDownLatch(1);
        private final CountDownLatch cooled = new CountDownLatch(1);
        private final ConcurrentLinkedQueue<String> output = new ConcurrentLinkedQueue<>();

        Child(Process process) {
            this.process = process;
            this.stdin = process.outputWriter(StandardCharsets.UTF_8);
            Thread reader = new Thread(this::read, "bench-child-" + process.pid());
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    output.add(line);
                    if (line.equals("READY")) {
                        ready.countDown();
                    } else if (line.equals("COOLED")) {
                        cooled.countDown();
                    }
                }
            } catch (IOException e) {
                output.add("(output lost: " + e.getMessage() + ")");
            }
        }

        void awaitReady() throws InterruptedException {
            if (!ready.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("worker process " + process.pid() + " not READY within 60 s; it said: "
                        + String.join("\n", output));
            }
        }

        void awaitCooled() throws InterruptedException {
            if (!cooled.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("worker process " + process.pid()
                        + " did not stop its warm-up engine within 60 s; it said: " + String.join("\n", output));
            }
        }

        void send(String line) throws IOException {
            stdin.write(line + "\n");
            stdin.flush();
        }

        void stop() throws InterruptedException {
            try {
                send("STOP");
                stdin.close();
            } catch (IOException e) {
                // already gone; destroy below
            }
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
