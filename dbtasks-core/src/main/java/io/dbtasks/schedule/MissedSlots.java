package io.dbtasks.schedule;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a schedule does with the slots it missed while no engine was running (or the database was
 * unreachable): skip them, run the latest once, or run each of the latest up to a bound. Never an
 * unbounded storm of catch-up tasks.
 *
 * <p>The rule: when a poll finds a schedule's slots due and the oldest of them is at most
 * the schedule's {@linkplain Schedule#misfireThreshold() misfire threshold} late, the schedule is on
 * time and every due slot gets its task, whatever the policy (a poll that came a few seconds late
 * catches up each slot). When the oldest is later than that, the schedule <em>misfired</em> and the
 * policy decides over all its due slots, up to now: after 90 s of downtime a once-a-second cron with
 * the default 10 s threshold gets one task under {@link #runLatest()} (the slot at or just before
 * the poll), none under {@link #skip()}, and the latest five under {@code runEach(5)}; the schedule
 * then goes on from the first slot after the poll. The policies:
 *
 * <table>
 *   <caption>Policies</caption>
 *   <tr><th>policy</th><th>tasks for the missed slots</th></tr>
 *   <tr><td>{@link #skip()}</td><td>none</td></tr>
 *   <tr><td>{@link #runLatest()} (default)</td><td>one, for the latest due slot</td></tr>
 *   <tr><td>{@link #runEach(int) runEach(n)}</td><td>one per due slot, the latest {@code n} (older
 *       ones are dropped)</td></tr>
 * </table>
 *
 * <p>Each task carries its slot's own key and time ({@link Schedule#slotKey}, {@link
 * io.dbtasks.TaskContext#slot()}), stable across retries and rescues, so a
 * handler can tell which period it stands for. Immutable and thread-safe.
 */
public final class MissedSlots {
    /** The policy's kind, stored as text in {@code dbtasks_schedule.missed_slots}. */
    public enum Mode {
        /** Missed slots get no task; the schedule goes on from its next slot. */
        SKIP,
        /** The latest missed slot gets one task; older ones none. */
        RUN_LATEST,
        /** Each of the latest {@link MissedSlots#max()} missed slots gets a task. */
        RUN_EACH
    }

    /** The most missed slots {@link #runEach(int)} may catch up at once. */
    public static final int MAX_RUN_EACH = 1000;

    private static final MissedSlots SKIP = new MissedSlots(Mode.SKIP, 0);
    private static final MissedSlots RUN_LATEST = new MissedSlots(Mode.RUN_LATEST, 1);

    private final Mode mode;
    private final int max;

    private MissedSlots(Mode mode, int max) {
        this.mode = mode;
        this.max = max;
    }

    /**
     * @return the policy that enqueues nothing for missed slots
     */
    public static MissedSlots skip() {
        return SKIP;
    }

    /**
     * @return the policy that enqueues one task, for the latest missed slot (the default)
     */
    public static MissedSlots runLatest() {
        return RUN_LATEST;
    }

    /**
     * @param max the most missed slots to enqueue, the latest ones, 1 to {@value #MAX_RUN_EACH}
     * @return the policy that enqueues one task per missed slot, at most {@code max}
     * @throws InvalidScheduleException if {@code max} is out of range
     */
    public static MissedSlots runEach(int max) {
        if (max < 1 || max > MAX_RUN_EACH) {
            throw new InvalidScheduleException("runEach(max) needs 1 to " + MAX_RUN_EACH + " missed slots, got " + max
                    + "; use skip() to run none");
        }
        return new MissedSlots(Mode.RUN_EACH, max);
    }

    /**
     * Rebuilds a policy from its stored form.
     *
     * @param mode the mode
     * @param max the bound of {@link Mode#RUN_EACH}; ignored for the others
     * @return the policy
     * @throws InvalidScheduleException if {@code max} is out of range for {@link Mode#RUN_EACH}
     */
    public static MissedSlots of(Mode mode, int max) {
        return switch (Objects.requireNonNull(mode, "mode")) {
            case SKIP -> SKIP;
            case RUN_LATEST -> RUN_LATEST;
            case RUN_EACH -> runEach(max);
        };
    }

    /**
     * @return the policy's kind
     */
    public Mode mode() {
        return mode;
    }

    /**
     * @return the most missed slots enqueued at once: 0 for {@link Mode#SKIP}, 1 for {@link
     *     Mode#RUN_LATEST}, the bound for {@link Mode#RUN_EACH}
     */
    public int max() {
        return max;
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof MissedSlots m && m.mode == mode && m.max == max;
    }

    @Override
    public int hashCode() {
        return mode.hashCode() * 31 + max;
    }

    @Override
    public String toString() {
        return mode == Mode.RUN_EACH ? "runEach(" + max + ")" : mode == Mode.SKIP ? "skip()" : "runLatest()";
    }
}
