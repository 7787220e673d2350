package io.dbtasks.bench;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.quartz.Job;
import org.quartz.JobExecutionContext;

/**
 * The job every Quartz cron trigger of the {@code quartz} scenario ({@link QuartzScheduleScenario})
 * fires: it only counts, per scheduled fire time (the slot), how many fired and when the last one
 * started. Public with a public constructor, since Quartz instantiates it by reflection.
 */
public final class QuartzNoOp implements Job {
    private static final Map<Long, Slot> SLOTS = new ConcurrentHashMap<>();

    /** Quartz's way in: a new instance per firing. */
    public QuartzNoOp() {}

    @Override
    public void execute(JobExecutionContext context) {
        long now = System.currentTimeMillis();
        Slot slot = SLOTS.computeIfAbsent(context.getScheduledFireTime().getTime(), k -> new Slot());
        slot.fired.incrementAndGet();
        slot.lastMillis.accumulateAndGet(now, Math::max);
    }

    /** @return how many fired for the slot at {@code slotMillis} */
    static long fired(long slotMillis) {
        Slot slot = SLOTS.get(slotMillis);
        return slot == null ? 0 : slot.fired.get();
    }

    /** @return when the last firing of the slot started (epoch ms), or 0 */
    static long lastMillis(long slotMillis) {
        Slot slot = SLOTS.get(slotMillis);
        return slot == null ? 0 : slot.lastMillis.get();
    }

    static void reset() {
        SLOTS.clear();
    }

    /** Firings of one slot. */
    private static final class Slot {
        final AtomicLong fired = new AtomicLong();
        final AtomicLong lastMillis = new AtomicLong();
    }
}
