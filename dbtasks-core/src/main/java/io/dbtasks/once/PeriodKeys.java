package io.dbtasks.once;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Objects;

/**
 * Keys for work that runs once per period: {@code daily-report:2026-11-22}, {@code
 * sync:2026-11-22T14}, {@code digest:2026-11-22T14:05:00Z}. Use them as run-once keys ({@link
 * RunOnceGuards}) or task idempotency keys. Day and hour boundaries depend on the zone, so it is
 * always given. Stateless and thread-safe.
 */
public final class PeriodKeys {
    private static final DateTimeFormatter HOUR = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH");

    private PeriodKeys() {}

    /**
     * @param name what runs, e.g. {@code daily-report}
     * @param day the day
     * @return {@code name:yyyy-MM-dd}
     */
    public static String daily(String name, LocalDate day) {
        return Objects.requireNonNull(name, "name") + ":" + Objects.requireNonNull(day, "day");
    }

    /**
     * @param name what runs
     * @param at any instant in the day
     * @param zone the zone whose calendar day counts
     * @return {@code name:yyyy-MM-dd} of the day that contains {@code at} in {@code zone}
     */
    public static String daily(String name, Instant at, ZoneId zone) {
        return daily(name, LocalDate.ofInstant(at, zone));
    }

    /**
     * @param name what runs
     * @param at any instant in the hour
     * @param zone the zone whose clock hour counts
     * @return {@code name:yyyy-MM-ddTHH} of the hour that contains {@code at} in {@code zone}
     */
    public static String hourly(String name, Instant at, ZoneId zone) {
        return Objects.requireNonNull(name, "name") + ":" + HOUR.format(at.atZone(zone));
    }

    /**
     * A key for one slot of a schedule, such as the fire time of a cron trigger, which the caller has
     * already truncated to the slot's start.
     *
     * @param name what runs
     * @param slotStart the start of the slot
     * @return {@code name:} and the slot start in ISO-8601 UTC, e.g. {@code digest:2026-11-22T14:05:00Z}
     */
    public static String slot(String name, Instant slotStart) {
        return Objects.requireNonNull(name, "name") + ":" + Objects.requireNonNull(slotStart, "slotStart");
    }

    /**
     * A key for fixed-rate work: the slot is {@code at} rounded down to a multiple of {@code period}
     * since the epoch (so every instance computes the same slot for the same run).
     *
     * @param name what runs
     * @param at any instant in the slot
     * @param period the slot length, at least one millisecond
     * @return as {@link #slot(String, Instant)} for the slot's start
     * @throws IllegalArgumentException if {@code period} is shorter than one millisecond
     */
    public static String every(String name, Instant at, Duration period) {
        long ms = period.toMillis();
        if (ms < 1) {
            throw new IllegalArgumentException("period must be at least 1 ms, got " + period);
        }
        long epochMs = at.toEpochMilli();
        return slot(name, Instant.ofEpochMilli(Math.floorDiv(epochMs, ms) * ms));
    }
}
