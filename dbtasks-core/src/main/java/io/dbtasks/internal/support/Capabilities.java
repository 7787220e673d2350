package io.dbtasks.internal.support;

import io.dbtasks.internal.dialect.Claimable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * What this engine can run: the kinds it has a handler for and, when it runs job definitions, the
 * targets its invoker allow-lists. Its claims filter by it ({@link Claimable}) and its worker row
 * advertises it, so that every engine can tell a task waiting for another engine from one that no
 * live engine can run.
 *
 * <p>The kinds are fixed when the engine is built; the job targets are read from the invoker again
 * at each {@link #refresh()} (start and every heartbeat), since an allow-list may grow while the
 * engine runs. Thread-safe: the snapshot is one volatile reference.
 */
public final class Capabilities {
    private final List<String> kinds;
    private final String jobKind;
    private final Supplier<Optional<? extends Collection<String>>> jobTargets;
    private volatile Claimable current;

    /**
     * @param kinds the kinds with a handler
     * @param jobKind the kind of job runs, whose tasks name a target
     * @param jobTargets the invoker's allow-listed targets, empty where it cannot list them (it is
     *     then taken to call any target)
     */
    public Capabilities(
            Collection<String> kinds, String jobKind, Supplier<Optional<? extends Collection<String>>> jobTargets) {
        this.kinds = List.copyOf(new TreeSet<>(kinds));
        this.jobKind = jobKind;
        this.jobTargets = jobTargets;
        refresh();
    }

    /** Reads the invoker's targets again; a failing invoker keeps the last snapshot. */
    public void refresh() {
        List<String> targets = null;
        if (kinds.contains(jobKind)) {
            Optional<? extends Collection<String>> listed = jobTargets.get();
            targets = listed.isPresent() ? List.copyOf(new TreeSet<>(listed.get())) : null;
        }
        current = new Claimable(kinds, targets);
    }

    /** @return what the next claim takes */
    public Claimable claimable() {
        return current;
    }

    /**
     * @param kind a task's kind
     * @param jobTarget its job target, or {@code null}
     * @return whether this engine claims such a task
     */
    public boolean canRun(String kind, String jobTarget) {
        return canRun(current.kinds(), current.jobTargets(), kind, jobTarget);
    }

    /**
     * Whether an engine advertising {@code kinds} and {@code targets} claims a task: any kind when
     * it advertises none ({@code null}, an engine of an older version), any target when it lists
     * none.
     */
    public static boolean canRun(Collection<String> kinds, Collection<String> targets, String kind, String jobTarget) {
        if (kinds == null) {
            return true;
        }
        if (!kinds.contains(kind)) {
            return false;
        }
        return jobTarget == null || targets == null || targets.contains(jobTarget);
    }

    /** @return the kinds, one per line, for the worker row */
    public String advertisedKinds() {
        return String.join("\n", current.kinds());
    }

    /** @return the job targets, one per line, or {@code null} for any target or no job kind */
    public String advertisedJobTargets() {
        List<String> targets = current.jobTargets();
        return targets == null ? null : String.join("\n", targets);
    }

    /** Reads a worker row's list column back; {@code null} stays {@code null}. */
    public static Set<String> decode(String lines) {
        if (lines == null) {
            return null;
        }
        Set<String> set = new TreeSet<>();
        for (String line : lines.split("\n")) {
            if (!line.isEmpty()) {
                set.add(line);
            }
        }
        return set;
    }

    /** @return the kinds, sorted */
    List<String> kinds() {
        return new ArrayList<>(kinds);
    }
}
