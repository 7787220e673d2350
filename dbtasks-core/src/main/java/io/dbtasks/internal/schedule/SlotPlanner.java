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
 * <p>The due slots are those from the row's next slot up to now. A due slot older than now minus
 * the misfire threshold is <em>missed</em>; the others are <em>on time</em> and always enqueued. Of
 * the missed ones, {@link MissedSlots} picks none, the latest, or the latest {@code n}. The walk is
 * bounded: missed slots are found backwards from the threshold (so a year of downtime under an
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
        Instant cutoff = now.minus(threshold);
        if (trigger.type() == Trigger.Type.FIXED_DELAY) {
            // One slot at a time: the next depends on when its task ends.
            if (next.isBefore(cutoff) && policy.mode() == MissedSlots.Mode.SKIP) {
                return new Plan(List.of(), trigger.nextSlot(now).orElseThrow());
            }
            return new Plan(List.of(next), null);
        }
        List<Instant> onTime = new ArrayList<>();
        Instant s = next.isBefore(cutoff) ? firstAtOrAfter(trigger, next, cutoff) : next;
        while (s != null && !s.isAfter(now) && onTime.size() < MAX_ON_TIME) {
            onTime.add(s);
            s = trigger.nextSlot(s).orElse(null);
        }
        int wanted = switch (policy.mode()) {
            case SKIP -> 0;
            case RUN_LATEST -> onTime.isEmpty() ? 1 : 0;
            case RUN_EACH -> policy.max();
        };
        Deque<Instant> missed = new ArrayDeque<>();
        if (wanted > 0 && next.isBefore(cutoff)) {
            Instant m = lastBefore(trigger, next, cutoff);
            while (m != null && !m.isBefore(next) && missed.size() < wanted) {
                missed.addFirst(m);
                m = trigger.previousSlot(m).orElse(null);
            }
        }
        List<Instant> slots = new ArrayList<>(missed.size() + onTime.size());
        slots.addAll(missed);
        slots.addAll(onTime);
        return new Plan(List.copyOf(slots), s);
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
