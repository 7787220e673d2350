package io.dbtasks.bench;

/**
 * One measured figure: a row of the table and of the CSV.
 *
 * @param scenario the scenario, e.g. {@code burndown}
 * @param database the database id
 * @param config what was varied, e.g. {@code W=8 P=1 batch=8}
 * @param series the chart series this figure belongs to, e.g. {@code dbtasks P=1}
 * @param workers worker threads (or client threads) it ran with; the key to its baselines
 * @param comparable whether it burns tasks down, so ratios to the ceiling and the peer mean something
 * @param tasks tasks processed
 * @param seconds wall-clock seconds
 * @param ratioToCeiling tasks/s over the best ceiling of the run (any worker count and batch), or
 *     {@code null}
 * @param ratioToPeer tasks/s over db-scheduler's at the same worker count (lock-and-fetch where it
 *     has it), or {@code null}
 * @param ratioToJobRunr tasks/s over JobRunr's at the same worker count, or {@code null}
 * @param latency enqueue-to-start percentiles, or {@code null}
 */
record Result(
        String scenario,
        String database,
        String config,
        String series,
        int workers,
        boolean comparable,
        long tasks,
        double seconds,
        Double ratioToCeiling,
        Double ratioToPeer,
        Double ratioToJobRunr,
        Percentiles latency) {

    /** A throughput figure that ratios apply to. */
    static Result throughput(
            String scenario, Database db, String config, String series, int workers, long tasks, double seconds) {
        return new Result(scenario, db.id(), config, series, workers, true, tasks, seconds, null, null, null, null);
    }

    /** A figure with no baseline (enqueue, latency). */
    static Result plain(String scenario, Database db, String config, long tasks, double seconds, Percentiles latency) {
        return new Result(scenario, db.id(), config, scenario, 0, false, tasks, seconds, null, null, null, latency);
    }

    /** @return tasks per second */
    double tasksPerSecond() {
        return seconds > 0 ? tasks / seconds : 0;
    }

    /** @return this figure with its ratios set */
    Result withRatios(Double toCeiling, Double toPeer, Double toJobRunr) {
        return new Result(
                scenario,
                database,
                config,
                series,
                workers,
                comparable,
                tasks,
                seconds,
                toCeiling,
                toPeer,
                toJobRunr,
                latency);
    }

    /**
     * Latency percentiles in milliseconds.
     *
     * @param p50 the median
     * @param p95 the 95th percentile
     * @param p99 the 99th percentile
     * @param max the largest
     */
    record Percentiles(double p50, double p95, double p99, double max) {
        /** @return the percentiles of {@code sortedMillis}, which must be sorted and not empty */
        static Percentiles of(double[] sortedMillis) {
            return new Percentiles(
                    at(sortedMillis, 0.50),
                    at(sortedMillis, 0.95),
                    at(sortedMillis, 0.99),
                    sortedMillis[sortedMillis.length - 1]);
        }

        /** Nearest-rank percentile. */
        static double at(double[] sorted, double q) {
            int rank = (int) Math.ceil(q * sorted.length);
            return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
        }
    }
}
