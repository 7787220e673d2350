package io.dbtasks.bench;

import java.util.Locale;

/** Progress lines on standard output, so a long run shows where it is. */
final class Log {
    private Log() {}

    static void line(String text) {
        System.out.println("[bench] " + text);
        System.out.flush();
    }

    /** A warm-up burn-down of {@code side} (the engine or a peer): logged, never reported as a figure. */
    static void warmUp(String side, String config, long tasks, double seconds) {
        line(String.format(
                Locale.ROOT,
                "%s warm-up (not measured; its first run in this JVM): %s %d tasks in %.2f s = %.0f tasks/s",
                side,
                config,
                tasks,
                seconds,
                tasks / seconds));
    }

    static void result(Result r) {
        line(String.format(
                Locale.ROOT,
                "%s %s %s: %d tasks in %.2f s = %.0f tasks/s",
                r.scenario(),
                r.database(),
                r.config(),
                r.tasks(),
                r.seconds(),
                r.tasksPerSecond()));
    }
}
