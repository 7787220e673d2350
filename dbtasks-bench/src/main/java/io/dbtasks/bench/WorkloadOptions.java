package io.dbtasks.bench;

import java.util.List;
import picocli.CommandLine.Option;

/**
 * The options of the workload scenarios ({@code handlers}, {@code failonce}, the multi-threaded
 * enqueue, latency at load and the child-JVM warm-up), kept apart from {@link BenchCommand}'s own
 * so the two grow without touching each other.
 */
final class WorkloadOptions {
    @Option(
            names = "--handler-sleep",
            split = ",",
            defaultValue = "0,1,10",
            description = "ms each handler of the handlers scenario sleeps (an I/O stand-in; 0: no-op, the"
                    + " database's limit at that W); comma-separated")
    List<Integer> handlerSleeps;

    @Option(
            names = "--executor",
            split = ",",
            defaultValue = "platform,virtual",
            description = "handler threads of the handlers scenario: platform (the engine's pool), virtual"
                    + " (Java 21+, skipped with a note on older JVMs)")
    List<String> executors;

    @Option(
            names = "--handler-workers",
            split = ",",
            defaultValue = "64,128,256,512",
            description = "engine concurrency W of the handlers scenario")
    List<Integer> handlerWorkers;

    @Option(
            names = "--handler-seconds",
            defaultValue = "3",
            description = "each handlers run gets W / sleep x this many tasks, capped by --handler-tasks")
    int handlerSeconds;

    @Option(names = "--handler-tasks", defaultValue = "30000", description = "most tasks per handlers run")
    int handlerTasks;

    @Option(
            names = "--handler-pool",
            defaultValue = "24",
            description = "most connections of a handlers engine (sleeping handlers hold none)")
    int handlerPool;

    @Option(
            names = "--enqueue-threads",
            defaultValue = "16",
            description = "client threads of the concurrent single enqueue (dbtasks and db-scheduler)")
    int enqueueThreads;

    @Option(
            names = "--latency-load",
            split = ",",
            defaultValue = "0.5",
            description = "latency also at these fractions of the no-op burn-down's tasks/s at the latency W,"
                    + " measured in the same scenario; 0 for none")
    List<Double> latencyLoads;

    @Option(
            names = "--failonce-backoff-ms",
            defaultValue = "1",
            description = "fixed backoff of the failonce scenario's retry")
    long failOnceBackoffMillis;

    @Option(
            names = "--child-warmup-tasks",
            defaultValue = "20000",
            description = "no-op tasks each child JVM burns before the clock starts (JIT warm-up); 0 for none")
    int childWarmupTasks;

    /** @return the options as a record */
    Workload workload() {
        return new Workload(
                List.copyOf(handlerSleeps),
                List.copyOf(executors),
                List.copyOf(handlerWorkers),
                handlerSeconds,
                handlerTasks,
                handlerPool,
                enqueueThreads,
                List.copyOf(latencyLoads),
                failOnceBackoffMillis,
                childWarmupTasks);
    }
}
