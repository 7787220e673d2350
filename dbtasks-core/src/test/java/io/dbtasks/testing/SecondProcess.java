package io.dbtasks.testing;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Another JVM on the test class path, for tests that need two processes. The child prints {@code
 * READY}, waits for {@code GO} on its standard input ({@link #awaitGo()}), works, and prints one
 * {@code FIGURES k=v ...} line ({@link #format}) before it exits.
 */
public final class SecondProcess implements AutoCloseable {
    private final Process process;
    private final List<String> lines = new ArrayList<>();

    private SecondProcess(Process process) {
        this.process = process;
        Thread reader = new Thread(this::readOutput, "second-process-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code main} with {@code args} in a new JVM with this JVM's test class path. */
    public static SecondProcess start(Class<?> main, String... args) throws IOException {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-cp", classpath, main.getName()));
        command.addAll(List.of(args));
        return new SecondProcess(
                new ProcessBuilder(command).redirectErrorStream(true).start());
    }

    /** Waits until the child printed {@code READY}, then tells it to start. */
    public void go(Duration timeout) throws Exception {
        awaitLine("READY", timeout);
        OutputStream in = process.getOutputStream();
        in.write("GO\n".getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    /** Waits for the child to exit and returns its figures. */
    public Map<String, Long> figures(Duration timeout) throws Exception {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("second process still running after " + timeout + ":\n" + output());
        }
        String line = awaitLine("FIGURES ", Duration.ofSeconds(5));
        if (process.exitValue() != 0) {
            throw new AssertionError("second process exited with " + process.exitValue() + ":\n" + output());
        }
        return parse(line.substring("FIGURES ".length()));
    }

    /**
     * Waits until the child printed a line starting with {@code prefix}.
     *
     * @return that line
     */
    public String awaitOutput(String prefix, Duration timeout) throws InterruptedException {
        return awaitLine(prefix, timeout);
    }

    /** Kills the child at once ({@code kill -9} on Linux) and waits for it to be gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("second process still alive 30 s after SIGKILL");
        }
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }

    /** In the child: blocks until the parent says GO. */
    public static void awaitGo() throws IOException {
        System.out.println("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("GO")) {
            // wait
        }
    }

    /** @return {@code k=v k=v ...} */
    public static String format(Map<String, Long> figures) {
        StringBuilder b = new StringBuilder();
        figures.forEach((k, v) ->
                b.append(b.length() == 0 ? "" : " ").append(k).append('=').append(v));
        return b.toString();
    }

    /** @return the figures of a {@link #format}ted line, in order */
    public static Map<String, Long> parse(String formatted) {
        Map<String, Long> m = new LinkedHashMap<>();
        for (String kv : formatted.trim().split(" ")) {
            int eq = kv.indexOf('=');
            m.put(kv.substring(0, eq), Long.parseLong(kv.substring(eq + 1)));
        }
        return m;
    }

    /** @return the sum of two figure maps, key by key, in the first's order */
    public static Map<String, Long> sum(Map<String, Long> a, Map<String, Long> b) {
        Map<String, Long> m = new LinkedHashMap<>(a);
        b.forEach((k, v) -> m.merge(k, v, Long::sum));
        return m;
    }

    private String awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            synchronized (lines) {
                for (String l : lines) {
                    if (l.startsWith(prefix)) {
                        return l;
                    }
                }
                lines.wait(50);
            }
        }
        throw new AssertionError("second process did not print " + prefix + " within " + timeout + ":\n" + output());
    }

    private String output() {
        synchronized (lines) {
            return String.join("\n", lines);
        }
    }

    private void readOutput() {
        try (BufferedReader r =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String l;
            while ((l = r.readLine()) != null) {
                synchronized (lines) {
                    lines.add(l);
                    lines.notifyAll();
                }
            }
        } catch (IOException e) {
            // the process ended
        }
    }
}
