package io.dbtasks.schedule;

import io.dbtasks.TaskKind;
import io.dbtasks.TaskOptions;
import io.dbtasks.TaskRequest;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A recurring schedule as declared: its unique name, its {@link Trigger}, the task each slot
 * enqueues (kind, payload, queue, priority, attempts), what to do with {@linkplain MissedSlots missed
 * slots}, and when to start. Build with {@link #builder(String, Trigger)}; declare it in code with
 * {@code DbTasks.Builder.schedule(...)} or store it at run time with {@link Schedules#create}.
 *
 * <p>Each slot enqueues one task with the idempotency key {@link #slotKey(String, Instant)}, the
 * schedule's name as task name, the slot's ISO-8601 instant as reference and the slot as due time.
 *
 * <p>Of a task's {@linkplain #options() options} a schedule honours the queue, the priority and
 * the max attempts, which it stores; it stores no retry policy or timeout, so its tasks take the
 * engine's defaults for them, and {@link Builder#options(TaskOptions)} refuses options that set
 * either.
 *
 * <p>Immutable and thread-safe. The payload is held as given and written as JSON when the schedule
 * is stored; equality compares it with {@link Object#equals}.
 */
public final class Schedule {
    /** The most characters of a schedule name; room is left in the 255-character slot key. */
    public static final int MAX_NAME_LENGTH = 200;

    /**
     * How late a slot may be found due and still count as on time, when the schedule does not say.
     * Longer than any poll interval and stall a loaded engine should have, shorter than a restart.
     */
    public static final Duration DEFAULT_MISFIRE_THRESHOLD = Duration.ofSeconds(10);

    private static final String KEY_PREFIX = "schedule:";

    private final String name;
    private final Trigger trigger;
    private final String kind;
    private final @Nullable Object payload;
    private final TaskOptions options;
    private final MissedSlots missedSlots;
    private final Duration misfireThreshold;
    private final @Nullable Instant startAt;

    private Schedule(Builder b) {
        this.name = b.name;
        this.trigger = b.trigger;
        this.kind = b.kind;
        this.payload = b.payload;
        this.options = b.options;
        this.missedSlots = b.missedSlots;
        this.misfireThreshold = b.misfireThreshold;
        this.startAt = b.startAt;
    }

    /**
     * Starts a schedule.
     *
     * @param name the unique name, 1 to {@value #MAX_NAME_LENGTH} characters, not blank; compared
     *     exactly (case and spaces matter)
     * @param trigger when the slots are
     * @return a builder, not thread-safe; {@link Builder#task} must be called before {@link
     *     Builder#build()}
     * @throws InvalidScheduleException if the name is out of range
     * @throws NullPointerException if an argument is {@code null}
     */
    public static Builder builder(String name, Trigger trigger) {
        return new Builder(name, trigger);
    }

    /**
     * A schedule with every default: queue {@value TaskRequest#DEFAULT_QUEUE}, no payload, {@link
     * MissedSlots#runLatest()}.
     *
     * @param name the unique name
     * @param trigger when the slots are
     * @param kind the kind of task each slot enqueues
     * @return the schedule
     * @throws InvalidScheduleException if the name or kind is out of range
     * @throws NullPointerException if an argument is {@code null}
     */
    public static Schedule of(String name, Trigger trigger, String kind) {
        return builder(name, trigger).task(kind).build();
    }

    /**
     * The idempotency key of a slot's task. Unique in {@code dbtasks_task}, which is what makes each
     * slot one task across the cluster.
     *
     * @param name the schedule's name
     * @param slot the slot
     * @return {@code "schedule:" + name + "@" + slot} (ISO-8601, UTC), e.g. {@code
     *     schedule:nightly@2026-03-29T01:00:00Z}
     * @throws NullPointerException if an argument is {@code null}
     */
    public static String slotKey(String name, Instant slot) {
        return KEY_PREFIX + Objects.requireNonNull(name, "name") + "@"
                + Objects.requireNonNull(slot, "slot").truncatedTo(ChronoUnit.MILLIS);
    }

    /**
     * The slot of a slot key ({@link #slotKey}), such as a task's idempotency key.
     *
     * @param key a task's idempotency key, or {@code null}
     * @return the slot, or empty if {@code key} is not a schedule's slot key
     */
    public static java.util.Optional<Instant> slotOf(@Nullable String key) {
        if (key == null || !key.startsWith(KEY_PREFIX)) {
            return java.util.Optional.empty();
        }
        int at = key.lastIndexOf('@');
        if (at < KEY_PREFIX.length()) {
            return java.util.Optional.empty();
        }
        try {
            return java.util.Optional.of(Instant.parse(key.substring(at + 1)));
        } catch (java.time.format.DateTimeParseException e) {
            return java.util.Optional.empty();
        }
    }

    /**
     * @return the unique name
     */
    public String name() {
        return name;
    }

    /**
     * @return when the slots are
     */
    public Trigger trigger() {
        return trigger;
    }

    /**
     * @return the kind of task each slot enqueues
     */
    public String kind() {
        return kind;
    }

    /**
     * @return the payload of each slot's task, or {@code null} for none
     */
    public @Nullable Object payload() {
        return payload;
    }

    /**
     * @return the options of each slot's task as given: queue, priority and max attempts, each {@code
     *     null} for the engine's default; retry policy and timeout always {@code null}
     */
    public TaskOptions options() {
        return options;
    }

    /**
     * @return the queue of each slot's task; {@value TaskOptions#DEFAULT_QUEUE} when not given
     */
    public String queue() {
        return options.queue() != null ? options.queue() : TaskOptions.DEFAULT_QUEUE;
    }

    /**
     * @return the priority of each slot's task (higher first); {@value TaskOptions#DEFAULT_PRIORITY}
     *     when not given
     */
    public int priority() {
        return options.priority() != null ? options.priority() : TaskOptions.DEFAULT_PRIORITY;
    }

    /**
     * @return the attempts each slot's task gets, or {@code null} for the engine's default
     */
    public @Nullable Integer maxAttempts() {
        return options.maxAttempts();
    }

    /**
     * @return what to do with missed slots
     */
    public MissedSlots missedSlots() {
        return missedSlots;
    }

    /**
     * @return how late the oldest due slot may be found and the schedule still count as on time
     *     (every due slot gets its task); later, the schedule misfired and its {@link #missedSlots()}
     *     policy decides over the due slots
     */
    public Duration misfireThreshold() {
        return misfireThreshold;
    }

    /**
     * @return no slot is earlier than this; {@code null} for "from when the schedule is stored"
     */
    public @Nullable Instant startAt() {
        return startAt;
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof Schedule s
                && s.name.equals(name)
                && s.trigger.equals(trigger)
                && s.kind.equals(kind)
                && Objects.equals(s.payload, payload)
                && s.queue().equals(queue())
                && s.priority() == priority()
                && Objects.equals(s.maxAttempts(), maxAttempts())
                && s.missedSlots.equals(missedSlots)
                && s.misfireThreshold.equals(misfireThreshold)
                && Objects.equals(s.startAt, startAt);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, trigger, kind, queue());
    }

    @Override
    public String toString() {
        return "Schedule[" + name + ", " + trigger + ", kind " + kind + ", queue " + queue() + ", missed slots "
                + missedSlots + "]";
    }

    /** Configures a {@link Schedule}. Not thread-safe. */
    public static final class Builder {
        private final String name;
        private final Trigger trigger;
        private @Nullable String kind;
        private @Nullable Object payload;
        private TaskOptions options = TaskOptions.DEFAULTS;
        private MissedSlots missedSlots = MissedSlots.runLatest();
        private Duration misfireThreshold = DEFAULT_MISFIRE_THRESHOLD;
        private @Nullable Instant startAt;

        private Builder(String name, Trigger trigger) {
            this.name = requireName(name, "schedule name");
            this.trigger = Objects.requireNonNull(trigger, "trigger");
        }

        /**
         * @param kind the kind of task each slot enqueues, 1 to {@value TaskRequest#MAX_NAME_LENGTH}
         *     characters; its handler runs the slot
         * @return this
         * @throws InvalidScheduleException if the kind is out of range
         */
        public Builder task(String kind) {
            this.kind = requireName(kind, "task kind");
            return this;
        }

        /**
         * @param kind the kind of task each slot enqueues
         * @param payload its payload, the kind's payload type, or {@code null}
         * @param <P> the payload type
         * @return this
         * @throws InvalidScheduleException if the kind is out of range
         */
        public <P> Builder task(TaskKind<P> kind, @Nullable P payload) {
            task(Objects.requireNonNull(kind, "kind").name());
            this.payload = payload;
            return this;
        }

        /**
         * @param payload the payload of each slot's task, written as JSON when the schedule is
         *     stored; {@code null} for none
         * @return this
         */
        public Builder payload(@Nullable Object payload) {
            this.payload = payload;
            return this;
        }

        /**
         * @param queue the queue of each slot's task, 1 to {@value TaskRequest#MAX_NAME_LENGTH}
         *     characters; default {@value TaskRequest#DEFAULT_QUEUE}
         * @return this
         * @throws InvalidScheduleException if the queue name is out of range
         */
        public Builder queue(String queue) {
            this.options = options.withQueue(requireName(queue, "queue"));
            return this;
        }

        /**
         * @param priority the priority of each slot's task, higher first; default 0
         * @return this
         */
        public Builder priority(int priority) {
            this.options = options.withPriority(priority);
            return this;
        }

        /**
         * @param maxAttempts the attempts each slot's task gets, at least 1; default the engine's
         * @return this
         * @throws InvalidScheduleException if {@code maxAttempts < 1}
         */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1) {
                throw new InvalidScheduleException("maxAttempts must be at least 1, got " + maxAttempts);
            }
            this.options = options.withMaxAttempts(maxAttempts);
            return this;
        }

        /**
         * Sets the queue, priority and max attempts of each slot's task at once; a field unset in
         * {@code options} takes the engine's default.
         *
         * @param options the options; retry policy and timeout must be unset
         * @return this
         * @throws InvalidScheduleException (an {@link IllegalArgumentException}) if {@code options}
         *     sets a retry policy or a timeout, which a schedule does not store, or its queue is out
         *     of range
         * @throws NullPointerException if {@code options} is {@code null}
         */
        public Builder options(TaskOptions options) {
            Objects.requireNonNull(options, "options");
            if (options.retryPolicy() != null || options.timeout() != null) {
                throw new InvalidScheduleException("a schedule stores the queue, priority and max attempts of its"
                        + " tasks only; leave retryPolicy and timeout unset in its options (got retryPolicy "
                        + options.retryPolicy() + ", timeout " + options.timeout()
                        + "): its tasks take the engine's defaults for them");
            }
            if (options.queue() != null) {
                requireName(options.queue(), "queue");
            }
            this.options = options;
            return this;
        }

        /**
         * @param policy what to do with slots missed while no engine ran; default {@link
         *     MissedSlots#runLatest()}
         * @return this
         */
        public Builder missedSlots(MissedSlots policy) {
            this.missedSlots = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * How late the oldest due slot may be found and the schedule still count as on time, every due
         * slot getting its task; later, the schedule misfired and {@link MissedSlots} decides (per
         * schedule).
         *
         * @param threshold zero or more, whole milliseconds; default {@link
         *     Schedule#DEFAULT_MISFIRE_THRESHOLD}
         * @return this
         * @throws InvalidScheduleException if {@code threshold} is negative
         */
        public Builder misfireThreshold(Duration threshold) {
            Objects.requireNonNull(threshold, "threshold");
            if (threshold.isNegative()) {
                throw new InvalidScheduleException("misfireThreshold must not be negative, got " + threshold);
            }
            this.misfireThreshold = threshold.truncatedTo(ChronoUnit.MILLIS);
            return this;
        }

        /**
         * No slot before {@code startAt}: a fixed rate's or delay's first slot is {@code startAt}, a
         * cron's first slot is its first at or after it. Default: from when the schedule is stored
         * (database time); for a fixed rate or delay that is the first slot.
         *
         * @param startAt the earliest slot, whole milliseconds; {@code null} for the default
         * @return this
         */
        public Builder startAt(@Nullable Instant startAt) {
            this.startAt = startAt == null ? null : startAt.truncatedTo(ChronoUnit.MILLIS);
            return this;
        }

        /**
         * @return the schedule
         * @throws InvalidScheduleException if no task kind was given
         */
        public Schedule build() {
            if (kind == null) {
                throw new InvalidScheduleException(
                        "Schedule '" + name + "' names no task: call task(kind) with the kind each slot enqueues");
            }
            return new Schedule(this);
        }

        private static String requireName(String value, String what) {
            Objects.requireNonNull(value, what);
            String problem = io.dbtasks.StoredText.nameProblem(value);
            if (problem != null) {
                throw new InvalidScheduleException("'" + what + "' " + problem);
            }
            int max = what.equals("schedule name") ? MAX_NAME_LENGTH : TaskRequest.MAX_NAME_LENGTH;
            if (value.isBlank() || value.length() > max) {
                throw new InvalidScheduleException(
                        what + " must be 1 to " + max + " characters and not blank, got '" + value + "'");
            }
            return value;
        }
    }
}
