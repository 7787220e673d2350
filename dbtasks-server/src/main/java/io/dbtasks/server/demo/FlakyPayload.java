package io.dbtasks.server.demo;

/**
 * The payload of {@code demo.flaky}.
 *
 * @param failTimes how many first attempts fail on purpose; 0 or more
 */
public record FlakyPayload(int failTimes) {
    /** @throws IllegalArgumentException if {@code failTimes} is negative */
    public FlakyPayload {
        if (failTimes < 0) {
            throw new IllegalArgumentException("failTimes must not be negative, got " + failTimes);
        }
    }
}
