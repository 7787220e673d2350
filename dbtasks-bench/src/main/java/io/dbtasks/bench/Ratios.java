package io.dbtasks.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Puts every throughput figure in proportion to the baselines measured in the same run at the same
 * worker count: the plain-JDBC ceiling, and db-scheduler with lock-and-fetch (with its default
 * polling where it has no lock-and-fetch, as on H2). A figure without a baseline at its worker count
 * keeps {@code null}.
 */
final class Ratios {
    private Ratios() {}

    static List<Result> apply(List<Result> results) {
        Map<Integer, Double> ceiling = new HashMap<>();
        Map<Integer, Double> peer = new HashMap<>();
        for (Result r : results) {
            if (r.series().equals("ceiling")) {
                ceiling.put(r.workers(), r.tasksPerSecond());
            } else if (r.series().equals(DbSchedulerPeer.LOCK_AND_FETCH)) {
                peer.put(r.workers(), r.tasksPerSecond());
            }
        }
        for (Result r : results) {
            if (r.series().equals(DbSchedulerPeer.POLLING)) {
                peer.putIfAbsent(r.workers(), r.tasksPerSecond());
            }
        }
        List<Result> out = new ArrayList<>(results.size());
        for (Result r : results) {
            if (!r.comparable()) {
                out.add(r);
                continue;
            }
            out.add(r.withRatios(ratio(r, ceiling.get(r.workers())), ratio(r, peer.get(r.workers()))));
        }
        return out;
    }

    private static Double ratio(Result r, Double baseline) {
        return baseline == null || baseline <= 0 ? null : r.tasksPerSecond() / baseline;
    }
}
