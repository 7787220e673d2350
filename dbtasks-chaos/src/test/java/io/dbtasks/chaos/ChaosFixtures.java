package io.dbtasks.chaos;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the chaos fixtures share: running a command to its end with its output kept for the error,
 * whether the JVM runs as root (then the database servers run as their own users), a free port, and
 * the JVM and class path that worker processes are started with. Stateless and thread-safe.
 */
final class ChaosFixtures {
    private ChaosFixtures() {}

    /**
     * Runs {@code command} and waits for it, 120 s at most.
     *
     * @param command the program and its arguments
     * @throws IOException if it cannot start, does not finish in 120 s (it is then killed), or exits
     *     with another status than 0; the message carries its output
     * @throws InterruptedException if interrupted while waiting
     */
    static void run(List<String> command) throws IOException, InterruptedException {
        Path log = Files.createTempFile("dbtasks-chaos-cmd-", ".log");
        try {
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(command + " did not finish: " + Files.readString(log));
            }
            if (p.exitValue() != 0) {
                throw new IOException(command + " exited with " + p.exitValue() + ": " + Files.readString(log));
            }
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /** @return whether this JVM runs as root */
    static boolean root() {
        return "root".equals(System.getProperty("user.name"));
    }

    /**
     * @return a TCP port that was free a moment ago (another process may take it before it is bound)
     * @throws IOException if no socket can be bound
     */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** @return the {@code java} binary of this JVM, for worker processes */
    static String java() {
        return System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    }

    /** @return the tests' class path (surefire's, else this JVM's), for worker processes */
    static String classpath() {
        return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    }
}
