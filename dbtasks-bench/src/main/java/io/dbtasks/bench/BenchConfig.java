package io.dbtasks.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.TreeSet;

/**
 * Everything one run measures with: where, which scenarios, how many workers, how many tasks.
 *
 * @param url the JDBC URL
 * @param user the user, or {@code null} when the URL carries it
 * @param password the password, or {@code null}
 * @param scenarios the scenarios to run, in order
 * @param workers the worker counts (engine concurrency, or client threads) burn-down compares
 * @param processes the process counts burn-down spreads its workers over
 * @param fixedWorkers the worker count of the latency, scale and soak scenarios
 * @param claimBatch the engine's claim batch, also the ceiling's batch cap
 * @param pollInterval the idle poll interval of dbtasks and of db-scheduler
 * @param burndownTasks tasks per burn-down and per ceiling run
 * @param enqueueTasks tasks per enqueue measurement
 * @param latencyRate tasks per second the latency scenario enqueues
 * @param latencySeconds how long it enqueues
 * @param scaleMin the smallest history size of the scale scenario
 * @param scaleMax the largest history size
 * @param scaleBatch tasks burned down at each history size
 * @param soakTasks tasks the soak burns down
 * @param soakWindow the soak's reporting window
 * @param peerTasks tasks per db-scheduler run
 * @param out the folder for CSV and charts
 * @param wipe whether tasks of queues other than the bench's may be deleted
 * @param slowListener how long a registered event listener sleeps per event, to compare the
 *     burn-down with and without a slow listener; {@link Duration#ZERO} registers none
 * @param schedules how many recurring schedules the schedules scenario stores
 * @param scheduleCron the cron (Spring syntax, seconds first) every one of them fires on
 * @param scheduleRounds how many consecutive slots it measures
 * @param scheduleEngines how many engines, in this JVM with a pool each, share the schedules
 * @param scheduleBatch the engines' schedule batch (schedules per poll transaction)
 * @param ceilingWorkers the claimer thread counts the ceiling sweeps
 * @param ceilingBatches the claim batch sizes the ceiling sweeps at each of them
 * @param ceilingWriters the ceiling's completion writer thread counts, swept with the others
 * @param ceilingSimple whether the ceiling also runs the simple cycle (claim and
 *     complete on one connection) at each burn-down worker count
 * @param jobRunrTasks jobs per JobRunr run
 * @param jobRunrPoll JobRunr's poll interval
 * @param historyTasks finished tasks the history scenario loads
 * @param historyWorkers the worker count of the history scenario's burn-downs
 * @param waitingTasks WAITING workflow steps the workflows scenario puts beside its burn-down
 * @param chains chains of steps the workflows scenario runs one at a time
 * @param limitsVariants the limits scenario's variants to run: those whose label it matches
 * @param workload the settings of the handlers, failonce, concurrent enqueue and latency-at-load
 *     measurements and of the child JVMs' warm-up
 */
record BenchConfig(
        String url,
        String user,
        String password,
        List<String> scenarios,
        List<Integer> workers,
        List<Integer> processes,
        int fixedWorkers,
        int claimBatch,
        Duration pollInterval,
        int burndownTasks,
        int enqueueTasks,
        int latencyRate,
        int latencySeconds,
        long scaleMin,
        long scaleMax,
        int scaleBatch,
        int soakTasks,
        Duration soakWindow,
        int peerTasks,
        Path out,
        boolean wipe,
        Duration slowListener,
        int schedules,
        String scheduleCron,
        int scheduleRounds,
        int scheduleEngines,
        int scheduleBatch,
        List<Integer> ceilingWorkers,
        List<Integer> ceilingBatches,
        List<Integer> ceilingWriters,
        boolean ceilingSimple,
        int jobRunrTasks,
        Duration jobRunrPoll,
        long historyTasks,
        int historyWorkers,
        long waitingTasks,
        int chains,
        long limitsWaiting,
        int limitsRuns,
        java.util.regex.Pattern limitsVariants,
        Workload workload) {

    /**
     * Every scenario {@code all} runs, in its order: the baselines first. The migration scenario is
     * left out: it makes and drops a database of its own, and measures an upgrade, not the engine.
     */
    static final List<String> ALL = List.of(
            "ceiling",
            "peer",
            "jobrunr",
            "burndown",
            "processes",
            "failonce",
            "handlers",
            "enqueue",
            "latency",
            "scale",
            "soak",
            "schedules",
            "quartz",
            "retention",
            "history",
            "history-designs",
            "workflows",
            "limits");

    /** @return the same run with sizes small enough for CI: every scenario in a few seconds */
    BenchConfig smoke() {
        return new BenchConfig(
                url,
                user,
                password,
                scenarios,
                List.of(2),
                processes,
                2,
                claimBatch,
                pollInterval,
                300,
                300,
                50,
                1,
                100,
                1000,
                200,
                2000,
                Duration.ofSeconds(1),
                300,
                out,
                wipe,
                slowListener,
                200,
                "*/5 * * * * *",
                1,
                scheduleEngines,
                scheduleBatch,
                List.of(1, 2),
                List.of(10, 50),
                ceilingWriters,
                true,
                20,
                jobRunrPoll,
                2000,
                2,
                2000,
                3,
                1000,
                1,
                limitsVariants,
                workload.smoke());
    }

    /** @return every worker count a baseline is needed for: the burn-down list and the fixed count */
    List<Integer> baselineWorkers() {
        TreeSet<Integer> all = new TreeSet<>(workers);
        all.add(fixedWorkers);
        return List.copyOf(all);
    }

    /**
     * @return the engine's largest claim with {@code w} workers: its free slots plus its claim-ahead
     *     buffer (four per slot), capped by the claim batch; the ceiling claims this many at a time
     */
    int batchFor(int w) {
        return Math.min(5 * w, claimBatch);
    }

    /** @return the history sizes of the scale scenario: {@code scaleMin}, times 10, up to {@code scaleMax} */
    List<Long> scaleSizes() {
        TreeSet<Long> sizes = new TreeSet<>();
        for (long s = scaleMin; s < scaleMax; s *= 10) {
            sizes.add(s);
        }
        sizes.add(scaleMax);
        return List.copyOf(sizes);
    }
}
