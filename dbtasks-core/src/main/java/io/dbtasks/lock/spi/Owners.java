package io.dbtasks.lock.spi;

/** Names the holder of a lock or run-once lease: the engine's worker id and the calling thread. */
public final class Owners {
    /** The width of the {@code owner} columns. */
    public static final int MAX_LENGTH = 200;

    private Owners() {}

    /** @return {@code workerId/threadName}, cut to {@value #MAX_LENGTH} characters */
    public static String current(String workerId) {
        String owner = workerId + "/" + Thread.currentThread().getName();
        return owner.length() <= MAX_LENGTH ? owner : owner.substring(0, MAX_LENGTH);
    }
}
