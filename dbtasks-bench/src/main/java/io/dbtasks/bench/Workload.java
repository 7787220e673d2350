package io.dbtasks.bench;

import java.util.List;

/**
 * The settings of the workload scenarios: handlers that take time, tasks that fail once, concurrent
 * enqueue, latency at load and the warm-up of child JVMs.
 *
 * @param handlerSleeps milliseconds each handler of the handlers scenario sleeps
 * @param executors {@code platform} and/or {@code virtual}: the handler threads it runs on
 * @param handlerWorkers the engine concurrencies W it sweeps
 * @param handlerSeconds each run gets about this many seconds of work at the ideal rate W / sleep
 * @param handlerTasks the cap on tasks per handlers run
 * @param handlerPool the most connections of a handlers engine
 * @param enqueueThreads client threads of the concurrent single enqueue
 * @param latencyLoads fractions of the measured no-op burn-down rate the latency scenario also runs at
 * @param failOnceBackoffMillis the fixed backoff before the retry in the failonce scenario
 * @param childWarmupTasks no-op tasks each child JVM burns before a measured multi-process run
 */
record Workload(
        List<Integer> handlerSleeps,
        List<String> executors,
        List<Integer> handlerWorkers,
        int handlerSeconds,
        int handlerTasks,
        int handlerPool,
        int enqueueThreads,
        List<Double> latencyLoads,
        long failOnceBackoffMillis,
        int childWarmupTasks) {

    /** @return the same settings with sizes small enough for a smoke run */
    Workload smoke() {
        return new Workload(
                List.of(1),
                executors,
                List.of(8),
                1,
                200,
                Math.min(handlerPool, 8),
                4,
                latencyLoads,
                failOnceBackoffMillis,
                Math.min(childWarmupTasks, 200));
    }

    /** @return the tasks of one handlers run at {@code workers} and {@code sleepMillis} */
    int handlerTasksFor(int workers, int sleepMillis) {
        long ideal = (long) workers * 1000 / Math.max(1, sleepMillis);
        return (int) Math.max(1, Math.min(handlerTasks, ideal * handlerSeconds));
    }
}
