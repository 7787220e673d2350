package io.dbtasks.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * A part of an engine that works in the background between the engine's start and stop: a claim
 * loop, the outcome writer, a periodic sweep, a listener. The engine holds its parts in one list,
 * starts them in its order and stops them in the reverse order, so a part is stopped only after
 * every part started after it, which may still use it.
 *
 * <p>{@link #stop} may be called on a part that was never started, and more than once; it then
 * releases what the part holds since construction and otherwise does nothing.
 */
interface BackgroundService {
    /** @return a short name for logs */
    String name();

    /** Starts the part's background work; called once, by the engine's start. */
    void start();

    /**
     * Stops the part's background work and waits for it.
     *
     * @param timeout how long, at most, to wait for work the part has in hand (running tasks)
     * @return whether all that work finished; false if some was handed back unfinished
     */
    boolean stop(Duration timeout);

    /**
     * @param name a short name for logs
     * @param start what starting does
     * @param stop what stopping does; told the timeout, says whether all work finished
     * @return a part doing {@code start} and {@code stop}
     */
    static BackgroundService of(String name, Runnable start, Predicate<Duration> stop) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(start, "start");
        Objects.requireNonNull(stop, "stop");
        return new BackgroundService() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public void start() {
                start.run();
            }

            @Override
            public boolean stop(Duration timeout) {
                return stop.test(timeout);
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    /**
     * @param name a short name for logs
     * @param stop what stopping does
     * @return a part with nothing to start, that only releases what it holds at stop
     */
    static BackgroundService closing(String name, Runnable stop) {
        return of(name, () -> {}, timeout -> {
            stop.run();
            return true;
        });
    }
}
