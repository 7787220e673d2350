package io.dbtasks.schedule;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.Optional;

/**
 * The slots of one cron expression in one time zone.
 *
 * <p>cron-utils matches the expression against <em>local</em> date-times only: it is handed wall
 * clock times in UTC, where no daylight-saving transition exists, so its own DST handling never
 * applies (tested: in Europe/Berlin it drops a 02:30 slot on the day of the spring gap entirely, and
 * runs a 02:20 slot twice in the autumn overlap). This class maps each matching local time to an
 * instant by the documented rule: a local time in a gap becomes the first instant after the gap (the
 * transition), a local time in an overlap its earlier instant; local times that map to an instant
 * already passed are skipped, so each instant is one slot and slots strictly increase.
 *
 * <p>Immutable and thread-safe (cron-utils' {@code ExecutionTime} holds no mutable state).
 */
final class CronSlots {
    /** Local matches walked at most to find one slot: an every-second cron across a one-hour overlap. */
    private static final int MAX_STEPS = 10_000;

    private static final CronParser SPRING =
            new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING53));
    private static final CronParser QUARTZ =
            new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.QUARTZ));

    private final ExecutionTime executions;
    private final ZoneRules rules;
    private final String expression;

    private CronSlots(ExecutionTime executions, ZoneId zone, String expression) {
        this.executions = executions;
        this.rules = zone.getRules();
        this.expression = expression;
    }

    static CronSlots parse(String expression, CronSyntax syntax, ZoneId zone) {
        Cron cron;
        try {
            cron = (syntax == CronSyntax.QUARTZ ? QUARTZ : SPRING).parse(expression.trim());
            cron.validate();
        } catch (RuntimeException e) {
            throw new InvalidScheduleException(
                    "Invalid cron expression '" + expression + "' in " + syntax + " syntax: " + e.getMessage() + ". "
                            + hint(syntax),
                    e);
        }
        CronSlots slots = new CronSlots(ExecutionTime.forCron(cron), zone, expression);
        if (slots.next(Instant.now()).isEmpty()) {
            throw new InvalidScheduleException("Cron expression '" + expression + "' never fires after now (a day"
                    + " that does not exist, such as 30 February, or a year in the past); " + hint(syntax));
        }
        return slots;
    }

    private static String hint(CronSyntax syntax) {
        return syntax == CronSyntax.QUARTZ
                ? "Quartz syntax has 6 or 7 fields: second minute hour day-of-month month day-of-week [year],"
                        + " with '?' in exactly one of day-of-month and day-of-week, days of the week 1-7 = SUN-SAT;"
                        + " e.g. \"0 30 2 * * ?\" for 02:30 every day"
                : "Spring syntax has 6 fields: second minute hour day-of-month month day-of-week, days of the week"
                        + " 0-7 (0 and 7 = SUN, 1 = MON), or a macro such as @daily; e.g. \"0 30 2 * * *\" for"
                        + " 02:30 every day (a 5-field Unix cron needs a leading seconds field)";
    }

    /** @return the first slot strictly after {@code after}, or empty if the expression fires no more */
    Optional<Instant> next(Instant after) {
        // Cron times are whole seconds; cron-utils keeps a cursor's fraction, so drop it.
        ZonedDateTime cursor = wallClock(after).truncatedTo(ChronoUnit.SECONDS);
        for (int i = 0; i < MAX_STEPS; i++) {
            Optional<ZonedDateTime> match = executions.nextExecution(cursor);
            if (match.isEmpty()) {
                return Optional.empty();
            }
            Instant slot = instant(match.get().toLocalDateTime().withNano(0));
            if (slot.isAfter(after)) {
                return Optional.of(slot);
            }
            cursor = match.get();
        }
        throw new IllegalStateException(
                "No slot of '" + expression + "' found within " + MAX_STEPS + " steps after " + after);
    }

    /** @return the last slot strictly before {@code before}, or empty if there is none */
    Optional<Instant> previous(Instant before) {
        ZonedDateTime wall = wallClock(before);
        ZonedDateTime cursor = wall.getNano() == 0
                ? wall
                : wall.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
        for (int i = 0; i < MAX_STEPS; i++) {
            Optional<ZonedDateTime> match = executions.lastExecution(cursor);
            if (match.isEmpty()) {
                return Optional.empty();
            }
            Instant slot = instant(match.get().toLocalDateTime().withNano(0));
            if (slot.isBefore(before)) {
                return Optional.of(slot);
            }
            cursor = match.get();
        }
        throw new IllegalStateException(
                "No slot of '" + expression + "' found within " + MAX_STEPS + " steps before " + before);
    }

    /** The local wall-clock time of {@code t}, carried as a UTC date-time so cron-utils sees no DST. */
    private ZonedDateTime wallClock(Instant t) {
        return LocalDateTime.ofInstant(t, rules.getOffset(t)).atZone(ZoneOffset.UTC);
    }

    /** The instant of a local time: a gap's end for a skipped time, the earlier for a repeated one. */
    private Instant instant(LocalDateTime local) {
        var offsets = rules.getValidOffsets(local);
        if (offsets.size() == 1) {
            return local.toInstant(offsets.get(0));
        }
        ZoneOffsetTransition t = rules.getTransition(local);
        return offsets.isEmpty() ? t.getInstant() : local.toInstant(t.getOffsetBefore());
    }
}
