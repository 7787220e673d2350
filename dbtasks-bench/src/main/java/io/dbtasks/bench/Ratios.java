package io.dbtasks.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Puts every throughput figure in proportion to the baselines measured in the same run: the best
 * ceiling of the whole sweep (whatever its worker count and batch: the database's limit does not
 * depend on how many threads a client uses), and the peers at the same worker count: db-scheduler
 * with lock-and-fetch (with its default polling where it has no lock-and-fetch, as on MariaDB and
 * H2) and JobRunr. A figure without a baseline keeps {@code null}.
 */
final class Ratios {
    private Ratios() {}

    static List<Result> apply(List<Result> results) {
        Double ceiling = bestCeiling(results).map(Result::tasksPerSecond).orElse(null);
        Map<Integer, Double> peer = new HashMap<>();
        Map<Integer, Double> jobRunr = new HashMap<>();
        for (Result r : results) {
            if (r.series().equals(DbSchedulerPeer.LOCK_AND_FETCH)) {
                peer.put(r.workers(), r.tasksPerSecond());
            } else if (r.series().equals(JobRunrPeer.SERIES)) {
                jobRunr.put(r.workers(), r.tasksPerSecond());
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
            if (r.series().equals(Ceiling.SERIES)
                    || r.series().equals(Ceiling.WITH_ATTEMPTS)
                    || r.series().equals(Ceiling.RERUN)) {
                // A ceiling point's W is claimer threads, not workers: only its share of the best means something.
                out.add(r.withRatios(ratio(r, ceiling), null, null));
                continue;
            }
            out.add(r.withRatios(
                    ratio(r, ceiling), ratio(r, peer.get(r.workers())), ratio(r, jobRunr.get(r.workers()))));
        }
        return out;
    }

    /** @return the fastest ceiling figure of the run: the one every "x ceiling" divides by */
    static Optional<Result> bestCeiling(List<Result> results) {
        return results.stream()
                .filter(r -> r.series().equals(Ceiling.SERIES))
                .max(Comparator.comparingDouble(Result::tasksPerSecond));
    }

    private static Double ratio(Result r, Double baseline) {
        return baseline == null || baseline <= 0 ? null : r.tasksPerSecond() / baseline;
    }
}
