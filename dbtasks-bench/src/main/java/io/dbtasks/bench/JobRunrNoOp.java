package io.dbtasks.bench;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The no-op job JobRunr runs in the {@code jobrunr} scenario ({@link JobRunrPeer}): a static method,
 * so JobRunr's server needs no job activator, that only counts. Public, since JobRunr calls it by
 * reflection from its own packages.
 */
public final class JobRunrNoOp {
    private static final AtomicLong EXECUTED = new AtomicLong();

    private JobRunrNoOp() {}

    /**
     * Does nothing but count.
     *
     * @param index the job's number in its run (stored as its argument, as a real job's would be)
     */
    public static void run(int index) {
        EXECUTED.incrementAndGet();
    }

    /** @return jobs run since the last {@link #reset()} */
    static long executed() {
        return EXECUTED.get();
    }

    static void reset() {
        EXECUTED.set(0);
    }
}
