package io.dbtasks.schedule;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * When a schedule's slots are: a cron expression in a time zone, a fixed rate, or a fixed delay.
 *
 * <p><b>Cron</b> expressions have seconds (six fields, Quartz allows a seventh for the year) and are
 * written in {@linkplain CronSyntax Spring or Quartz syntax}. Slots are computed in the trigger's time
 * zone (default UTC), with daylight-saving time handled so that every local time the expression names
 * fires exactly once:
 *
 * <ul>
 *   <li>a local time skipped by a gap (02:30 in Europe/Berlin on 29 March 2026, when clocks jump
 *       from 02:00 to 03:00) fires once, at the first valid instant after the gap (03:00 local); an
 *       expression matching several skipped times (every minute) fires once for all of them;
 *   <li>a local time repeated by an overlap (02:30 on 25 October 2026, when clocks go back from 03:00
 *       to 02:00) fires once, at its first occurrence (02:30 summer time); an every-minute expression
 *       therefore pauses for the repeated hour rather than running it twice.
 * </ul>
 *
 * <p>This is the rule of Vixie cron (jobs in a skipped hour run right after the change; a repeated
 * hour does not run them twice). cron-utils, which parses and matches the expression, is only given
 * local times without an offset; the mapping to instants is this library's.
 *
 * <p><b>Why cron-utils.</b> The core needs nothing but a DataSource, so Spring's {@code
 * CronExpression} (in spring-context) is out, and a scheduler library would bring far more than a
 * parser. cron-utils ({@code com.cronutils:cron-utils}, Apache 2.0) parses both Spring's
 * (definition {@code SPRING53}) and Quartz's dialect, depends only on SLF4J, and is used here for
 * parsing and matching only. Its last release, 9.2.1, dates from 2023; its {@code @Cron} bean
 * validation annotation had CVE-2020-26238 (expression-language injection through Hibernate
 * Validator messages, fixed in 9.1.3) and is never used. Its own DST handling is bypassed, as above.
 *
 * <p><b>Fixed rate</b> slots are a period apart, from the first slot on: the schedule's creation, or
 * the instant given to the schedule. <b>Fixed delay</b> slots come a delay after the previous slot's
 * task finished (SUCCEEDED, FAILED or CANCELLED); no slot is due while that task is unfinished.
 *
 * <p>Immutable and thread-safe; equal when type, expression, syntax, zone and period are equal.
 */
public final class Trigger {
    /** The kind of trigger, stored as text in {@code dbtasks_schedule.trigger_type}. */
    public enum Type {
        /** A cron expression in a time zone. */
        CRON,
        /** Slots a fixed period apart. */
        FIXED_RATE,
        /** Each slot a fixed delay after the previous slot's task finished. */
        FIXED_DELAY
    }

    /** The time zone of a cron trigger that names none. */
    public static final ZoneId DEFAULT_ZONE = ZoneOffset.UTC;

    /** The most characters of a cron expression (the column size). */
    public static final int MAX_EXPRESSION_LENGTH = 200;

    private final Type type;
    private final @Nullable String expression;
    private final @Nullable CronSyntax syntax;
    private final @Nullable ZoneId zone;
    private final @Nullable Duration period;
    private final @Nullable CronSlots cron;

    private Trigger(
            Type type,
            @Nullable String expression,
            @Nullable CronSyntax syntax,
            @Nullable ZoneId zone,
            @Nullable Duration period,
            @Nullable CronSlots cron) {
        this.type = type;
        this.expression = expression;
        this.syntax = syntax;
        this.zone = zone;
        this.period = period;
        this.cron = cron;
    }

    /**
     * A cron trigger in {@linkplain CronSyntax#SPRING Spring syntax} and UTC.
     *
     * @param expression six fields with seconds first, e.g. {@code "0 30 2 * * *"}
     * @return the trigger
     * @throws InvalidScheduleException if the expression does not parse or never fires; the message
     *     says which part is wrong
     * @throws NullPointerException if {@code expression} is {@code null}
     */
    public static Trigger cron(String expression) {
        return cron(expression, CronSyntax.SPRING, DEFAULT_ZONE);
    }

    /**
     * A cron trigger in {@linkplain CronSyntax#SPRING Spring syntax}.
     *
     * @param expression six fields with seconds first, e.g. {@code "0 30 2 * * *"}
     * @param zone the time zone the expression's times are in
     * @return the trigger
     * @throws InvalidScheduleException if the expression does not parse or never fires
     * @throws NullPointerException if an argument is {@code null}
     */
    public static Trigger cron(String expression, ZoneId zone) {
        return cron(expression, CronSyntax.SPRING, zone);
    }

    /**
     * A cron trigger.
     *
     * @param expression the expression in {@code syntax}
     * @param syntax Spring's or Quartz's dialect
     * @param zone the time zone the expression's times are in
     * @return the trigger
     * @throws InvalidScheduleException if the expression does not parse, is longer than {@value
     *     #MAX_EXPRESSION_LENGTH} characters, or never fires; the message says which part is wrong
     *     and gives an example
     * @throws NullPointerException if an argument is {@code null}
     */
    public static Trigger cron(String expression, CronSyntax syntax, ZoneId zone) {
        Objects.requireNonNull(expression, "expression");
        Objects.requireNonNull(syntax, "syntax");
        Objects.requireNonNull(zone, "zone");
        String trimmed = expression.trim();
        if (trimmed.isEmpty() || trimmed.length() > MAX_EXPRESSION_LENGTH) {
            throw new InvalidScheduleException("A cron expression must be 1 to " + MAX_EXPRESSION_LENGTH
                    + " characters, got " + trimmed.length() + "; e.g. \"0 30 2 * * *\"");
        }
        return new Trigger(Type.CRON, trimmed, syntax, zone, null, CronSlots.parse(trimmed, syntax, zone));
    }

    /**
     * A cron trigger in a time zone given by its id.
     *
     * @param expression the expression in {@code syntax}
     * @param syntax Spring's or Quartz's dialect
     * @param zoneId a time-zone id such as {@code "Europe/Berlin"} or {@code "UTC"}
     * @return the trigger
     * @throws InvalidScheduleException if the zone id is unknown, or as {@link #cron(String,
     *     CronSyntax, ZoneId)}
     * @throws NullPointerException if an argument is {@code null}
     */
    public static Trigger cron(String expression, CronSyntax syntax, String zoneId) {
        Objects.requireNonNull(zoneId, "zoneId");
        ZoneId zone;
        try {
            zone = ZoneId.of(zoneId);
        } catch (DateTimeException e) {
            throw new InvalidScheduleException(
                    "Unknown time zone '" + zoneId + "': " + e.getMessage() + "; use a region id such as"
                            + " \"Europe/Berlin\" or an offset such as \"UTC\" or \"+02:00\"",
                    e);
        }
        return cron(expression, syntax, zone);
    }

    /**
     * Slots {@code period} apart.
     *
     * @param period the time between slots, at least 1 ms, whole milliseconds
     * @return the trigger
     * @throws InvalidScheduleException if {@code period} is shorter than 1 ms
     * @throws NullPointerException if {@code period} is {@code null}
     */
    public static Trigger fixedRate(Duration period) {
        return new Trigger(Type.FIXED_RATE, null, null, null, millis(period, "fixedRate period"), null);
    }

    /**
     * Each slot {@code delay} after the previous slot's task finished.
     *
     * @param delay the time from one task's end to the next slot, at least 1 ms, whole milliseconds
     * @return the trigger
     * @throws InvalidScheduleException if {@code delay} is shorter than 1 ms
     * @throws NullPointerException if {@code delay} is {@code null}
     */
    public static Trigger fixedDelay(Duration delay) {
        return new Trigger(Type.FIXED_DELAY, null, null, null, millis(delay, "fixedDelay delay"), null);
    }

    private static Duration millis(Duration d, String what) {
        Objects.requireNonNull(d, what);
        Duration truncated = d.truncatedTo(ChronoUnit.MILLIS);
        if (truncated.compareTo(Duration.ofMillis(1)) < 0) {
            throw new InvalidScheduleException(what + " must be at least 1 ms, got " + d);
        }
        return truncated;
    }

    /**
     * @return the kind of trigger
     */
    public Type type() {
        return type;
    }

    /**
     * @return the cron expression (trimmed), empty for fixed rate and fixed delay
     */
    public Optional<String> expression() {
        return Optional.ofNullable(expression);
    }

    /**
     * @return the cron dialect, empty for fixed rate and fixed delay
     */
    public Optional<CronSyntax> syntax() {
        return Optional.ofNullable(syntax);
    }

    /**
     * @return the cron time zone, empty for fixed rate and fixed delay (their slots are instants)
     */
    public Optional<ZoneId> zone() {
        return Optional.ofNullable(zone);
    }

    /**
     * @return the period of a fixed rate or the delay of a fixed delay, empty for cron
     */
    public Optional<Duration> period() {
        return Optional.ofNullable(period);
    }

    /**
     * The slot after {@code after}: for cron, the first slot strictly after it; for a fixed rate or
     * delay, {@code after} plus the period (so {@code after} should be a slot, or for a fixed delay the
     * end of the previous task).
     *
     * @param after an instant
     * @return the next slot, whole milliseconds; empty if a cron expression fires no more (a year
     *     field in the past)
     * @throws NullPointerException if {@code after} is {@code null}
     */
    public Optional<Instant> nextSlot(Instant after) {
        Objects.requireNonNull(after, "after");
        if (cron != null) {
            return cron.next(after);
        }
        return Optional.of(after.plus(period).truncatedTo(ChronoUnit.MILLIS));
    }

    /**
     * The slot before {@code before}: for cron, the last slot strictly before it; for a fixed rate or
     * delay, {@code before} minus the period.
     *
     * @param before an instant
     * @return the previous slot; empty if a cron expression had none
     * @throws NullPointerException if {@code before} is {@code null}
     */
    public Optional<Instant> previousSlot(Instant before) {
        Objects.requireNonNull(before, "before");
        if (cron != null) {
            return cron.previous(before);
        }
        return Optional.of(before.minus(period).truncatedTo(ChronoUnit.MILLIS));
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof Trigger t
                && t.type == type
                && Objects.equals(t.expression, expression)
                && t.syntax == syntax
                && Objects.equals(t.zone, zone)
                && Objects.equals(t.period, period);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, expression, syntax, zone, period);
    }

    /** @return {@code cron(0 30 2 * * * SPRING Europe/Berlin)}, {@code fixedRate(PT10S)} or {@code fixedDelay(PT10S)} */
    @Override
    public String toString() {
        return switch (type) {
            case CRON -> "cron(" + expression + " " + syntax + " " + zone + ")";
            case FIXED_RATE -> "fixedRate(" + period + ")";
            case FIXED_DELAY -> "fixedDelay(" + period + ")";
        };
    }
}
