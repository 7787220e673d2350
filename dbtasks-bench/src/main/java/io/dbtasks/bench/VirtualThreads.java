package io.dbtasks.bench;

import java.lang.reflect.InvocationTargetException;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Virtual threads where the JVM has them (Java 21+), found by reflection so the harness still
 * compiles and runs on Java 17.
 */
final class VirtualThreads {
    private VirtualThreads() {}

    /**
     * @return a new {@code Executors.newVirtualThreadPerTaskExecutor()}, which the caller shuts down,
     *     or empty if this JVM has none (see {@link #unavailableReason()})
     */
    static Optional<ExecutorService> newExecutor() {
        try {
            return Optional.of((ExecutorService)
                    Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return Optional.empty();
        } catch (InvocationTargetException e) {
            // Java 19 and 20 have the method but refuse it without --enable-preview.
            return Optional.empty();
        }
    }

    /** @return whether {@link #newExecutor()} gives an executor on this JVM */
    static boolean available() {
        Optional<ExecutorService> e = newExecutor();
        e.ifPresent(ExecutorService::shutdown);
        return e.isPresent();
    }

    /** @return why there are no virtual threads here, naming the JVM */
    static String unavailableReason() {
        return "this JVM (Java " + System.getProperty("java.version") + ", " + System.getProperty("java.home")
                + ") has no virtual threads; they need Java 21 or later";
    }

    /** @return the running JVM's version, e.g. {@code 25.0.1} */
    static String javaVersion() {
        return System.getProperty("java.version");
    }
}
