package io.dbtasks.internal.schedule;

import io.dbtasks.schedule.MissedSlots;
import io.dbtasks.schedule.Trigger;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

/**
 * Decides, for one due schedule, which slots get a task now and which slot is next. Pure: the same
 * row and the same "now" always give the same plan, whichever engine computes it.
 *
 * <p>One rule, the misfire rule: the due slots are those from the row's next slot up to now.
 * When the oldest of them is at most the misfire threshold late, the schedule is on time and every
 * due slot is enqueued (a poll that came a little late, after a pause or a slow statement, catches
 * up each slot). When it is later than that, the schedule <em>misfired</em> (no engine ran, or the
 * database was unreachable) and the {@link MissedSlots} policy decides over all the due slots: none,
 * the latest, or the latest {@code n}; the schedule then goes on from the first slot after now. The
 * walk is bounded: a misfire's slots are found backwards from now (so a year of downtime under an
 * every-second cron costs {@code n} steps, not millions), on-time slots forwards, at most {@link
 * #MAX_ON_TIME} per poll.
 */
final class SlotPlanner {
    /** The most on-time slots one poll enqueues for one schedule; the rest follow at the next poll. */
    static final int MAX_ON_TIME = 1000;

    /**
     * @param slots the slots to enqueue, oldest first
     * @param nextSlot the row's next slot after them; {@code null} when a fixed delay now waits for
     *     its task, or a cron fires no more
     */
    record Plan(List<Instant> slots, Instant nextSlot) {}

    private SlotPlanner() {}

    static Plan plan(Trigger trigger, Instant next, Instant now, MissedSlots policy, Duration threshold) {
        boolean misfired = next.isBefore(now.minus(threshold));
        if (trigger.type() == Trigger.Type.FIXED_DELAY) {
            // One slot at a time: the next depends on when its task ends.
            if (misfired && policy.mode() == MissedSlots.Mode.SKIP) {
                return new Plan(List.of(), trigger.nextSlot(now).orElseThrow());
            }
            return new Plan(List.of(next), null);
        }
        if (!misfired) {
            List<Instant> onTime = new ArrayList<>();
            Instant s = next;
            while (s != null && !s.isAfter(now) && onTime.size() < MAX_ON_TIME) {
                onTime.add(s);
                s = trigger.nextSlot(s).orElse(null);
            }
            return new Plan(List.copyOf(onTime), s);
        }
        int wanted = switch (policy.mode()) {
            case SKIP -> 0;
            case RUN_LATEST -> 1;
            case RUN_EACH -> policy.max();
        };
        // The latest slot at or before now, and back from it.
        Deque<Instant> run = new ArrayDeque<>();
        Instant m = lastBefore(trigger, next, now.plusNanos(1));
        while (m != null && !m.isBefore(next) && run.size() < wanted) {
            run.addFirst(m);
            m = trigger.previousSlot(m).orElse(null);
        }
        return new Plan(List.copyOf(run), firstAtOrAfter(trigger, next, now.plusNanos(1)));
    }

    /**
     * The first slot at or after {@code t} (a cron's, or the fixed rate's from {@code base}).
     *
     * @return the slot, or {@code null} if a cron fires no more
     */
    static Instant firstAtOrAfter(Trigger trigger, Instant base, Instant t) {
        if (trigger.type() == Trigger.Type.CRON) {
            return trigger.nextSlot(t.minusNanos(1)).orElse(null);
        }
        long period = trigger.period().orElseThrow().toNanos();
        long gap = Duration.between(base, t).toNanos();
        if (gap <= 0) {
            return base;
        }
        long steps = (gap + period - 1) / period;
        return base.plusNanos(steps * period).truncatedTo(ChronoUnit.MILLIS);
    }

    /** The last slot strictly before {@code t}, or {@code null}. */
    private static Instant lastBefore(Trigger trigger, Instant base, Instant t) {
        if (trigger.type() == Trigger.Type.CRON) {
            Optional<Instant> p = trigger.previousSlot(t);
            return p.orElse(null);
        }
        long period = trigger.period().orElseThrow().toNanos();
        long gap = Duration.between(base, t).toNanos();
        if (gap <= 0) {
            return null;
        }
        return base.plusNanos((gap - 1) / period * period);
    }
}
