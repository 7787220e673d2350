package io.dbtasks.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The command line of the harness. Parses the options into a {@link BenchConfig}, runs the chosen
 * scenarios against one database, puts every throughput figure in proportion to the best ceiling
 * and to db-scheduler and JobRunr measured in the same run ({@link Ratios}), and writes the {@link
 * Report}.
 */
@Command(
        name = "dbtasks-bench",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Measures dbtasks on one database: burn-down, enqueue, latency, scale and soak, each against the"
                    + " best plain-JDBC ceiling of a sweep over threads and batch sizes, db-scheduler and JobRunr"
                    + " in the same run; recurring schedules beside Quartz.",
            "It TRUNCATES dbtasks_task, dbtasks_attempt and the history counts: point it at a dedicated database."
        })
public final class BenchCommand implements Callable<Integer> {
    private static final Map<String, Scenario> SCENARIOS = List.of(
                    new Ceiling(),
                    new DbSchedulerPeer(),
                    new JobRunrPeer(),
                    new BurndownScenario(),
                    new ProcessesScenario(),
                    new FailOnceScenario(),
                    new HandlersScenario(),
                    new EnqueueScenario(),
                    new LatencyScenario(),
                    new ScaleScenario(),
                    new SoakScenario(),
                    new ScheduleScenario(),
                    new QuartzScheduleScenario(),
                    new RetentionScenario(),
                    new HistoryScenario(),
                    new HistoryDesignsScenario(),
                    new MigrationScenario(),
                    new QueueRetentionScenario(),
                    new WorkflowScenario(),
                    new LimitsScenario())
            .stream()
            .collect(Collectors.toMap(Scenario::name, Function.identity()));

    @Option(names = "--url", required = true, description = "JDBC URL (PostgreSQL, MariaDB or H2)")
    String url;

    @Option(names = "--user", description = "database user, if not in the URL")
    String user;

    @Option(names = "--password", description = "database password, if not in the URL")
    String password;

    @Option(
            names = "--scenario",
            split = ",",
            defaultValue = "all",
            description = "burndown, processes, failonce, handlers, enqueue, latency, scale, soak, schedules, quartz,"
                    + " retention, history, history-designs, workflows, limits, ceiling, peer (db-scheduler), jobrunr"
                    + " or all; comma-separated; also migration (the upgrade to history by day, in a database of"
                    + " its own) and queue-retention (the sweeps of a queue kept shorter, beside a loaded"
                    + " history), which all leaves out")
    List<String> scenarios;

    @Option(names = "--workers", split = ",", defaultValue = "4,8,16,32", description = "burn-down worker counts")
    List<Integer> workers;

    @Option(names = "--processes", split = ",", defaultValue = "1", description = "burn-down process counts")
    List<Integer> processes;

    @Option(names = "--fixed-workers", defaultValue = "8", description = "workers of latency, scale and soak")
    int fixedWorkers;

    @Option(names = "--claim-batch", defaultValue = "250", description = "the engine's claim batch")
    int claimBatch;

    @Option(names = "--poll-ms", defaultValue = "100", description = "idle poll interval, dbtasks and db-scheduler")
    long pollMillis;

    @Option(names = "--tasks", defaultValue = "50000", description = "tasks per burn-down and per ceiling sweep point")
    int tasks;

    @Option(names = "--enqueue-tasks", defaultValue = "10000", description = "tasks per enqueue measurement")
    int enqueueTasks;

    @Option(names = "--latency-rate", defaultValue = "200", description = "tasks/s the latency scenario enqueues")
    int latencyRate;

    @Option(names = "--latency-seconds", defaultValue = "10", description = "how long it enqueues")
    int latencySeconds;

    @Option(names = "--scale-min", defaultValue = "100000", description = "smallest history size")
    long scaleMin;

    @Option(names = "--scale-max", defaultValue = "10000000", description = "largest history size")
    long scaleMax;

    @Option(names = "--scale-batch", defaultValue = "10000", description = "tasks burned down at each size")
    int scaleBatch;

    @Option(
            names = "--history-tasks",
            defaultValue = "1000000",
            description = "finished tasks the history scenario loads")
    long historyTasks;

    @Option(
            names = "--history-workers",
            defaultValue = "32",
            description = "workers of the history scenario's burn-downs")
    int historyWorkers;

    @Option(
            names = "--waiting-tasks",
            defaultValue = "1000000",
            description = "WAITING workflow steps the workflows scenario puts beside its burn-down")
    long waitingTasks;

    @Option(
            names = "--chains",
            defaultValue = "200",
            description = "10-step chains the workflows scenario runs one at a time")
    int chains;

    @Option(names = "--soak-tasks", defaultValue = "1000000", description = "tasks the soak burns down")
    int soakTasks;

    @Option(names = "--soak-window-seconds", defaultValue = "10", description = "soak reporting window")
    int soakWindowSeconds;

    @Option(names = "--peer-tasks", defaultValue = "20000", description = "tasks per db-scheduler run")
    int peerTasks;

    @Mixin
    WorkloadOptions workload = new WorkloadOptions();

    @Option(
            names = "--limits-waiting",
            defaultValue = "1000000",
            description = "tasks the limits scenario keeps waiting behind a key's limit")
    long limitsWaiting;

    @Option(
            names = "--limits-runs",
            defaultValue = "3",
            description = "rounds of the limits scenario, each running every variant once")
    int limitsRuns;

    @Option(
            names = "--limits-variants",
            defaultValue = ".*",
            description = "a regular expression: the limits scenario runs the variants whose label matches it"
                    + " (the run behind a limit matches as 'limit 8 W=32, waiting')")
    java.util.regex.Pattern limitsVariants;

    @Option(names = "--out", defaultValue = "target/bench", description = "folder for CSV and charts")
    Path out;

    @Option(names = "--smoke", description = "every scenario with tiny sizes, a few seconds each (for CI)")
    boolean smoke;

    @Option(names = "--wipe", description = "truncate the tables even if they hold other queues' tasks")
    boolean wipe;

    @Option(
            names = "--keep",
            description =
                    "leave the tables as the last scenario left them (to inspect its plans); the next run truncates them")
    boolean keep;

    @Option(
            names = "--slow-listener-ms",
            defaultValue = "0",
            description = "register an event listener that sleeps this long per event on every in-process engine"
                    + " (0: none), to measure that a slow listener does not slow the burn-down")
    long slowListenerMillis;

    @Option(
            names = "--schedules",
            defaultValue = "10000",
            description = "recurring schedules the schedules scenario stores")
    int schedules;

    @Option(
            names = "--schedule-cron",
            defaultValue = "0 * * * * *",
            description = "the cron every schedule fires on (Spring syntax, seconds first); default every minute")
    String scheduleCron;

    @Option(
            names = "--schedule-rounds",
            defaultValue = "3",
            description = "consecutive slots the schedules scenario measures")
    int scheduleRounds;

    @Option(names = "--schedule-engines", defaultValue = "3", description = "engines sharing the schedules")
    int scheduleEngines;

    @Option(names = "--schedule-batch", defaultValue = "250", description = "schedules per poll transaction")
    int scheduleBatch;

    @Option(
            names = "--ceiling-workers",
            split = ",",
            defaultValue = "1,2,4,8,16,32,64",
            description = "claimer threads the ceiling sweeps")
    List<Integer> ceilingWorkers;

    @Option(
            names = "--ceiling-batches",
            split = ",",
            defaultValue = "10,50,100,250,500",
            description = "claim batch sizes the ceiling sweeps at each thread count")
    List<Integer> ceilingBatches;

    @Option(
            names = "--ceiling-writers",
            split = ",",
            defaultValue = "" + Ceiling.WRITERS_DEFAULT,
            description = "completion writer threads of the ceiling (group commit on their own connections);"
                    + " a list is swept like the thread counts and batches")
    List<Integer> ceilingWriters;

    @Option(
            names = "--ceiling-simple",
            description = "also run the simple ceiling (claim and complete on one connection) at each"
                    + " burn-down worker count")
    boolean ceilingSimple;

    @Option(names = "--jobrunr-tasks", defaultValue = "20000", description = "jobs per JobRunr run")
    int jobRunrTasks;

    @Option(
            names = "--jobrunr-poll-ms",
            defaultValue = "5000",
            description =
                    "JobRunr's poll interval (5000: the smallest it accepts on SQL storage; its default is 15000)")
    long jobRunrPollMillis;

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command line without exiting. @return the exit code, 0 on success */
    public static int execute(String... args) {
        return new CommandLine(new BenchCommand()).execute(args);
    }

    @Override
    public Integer call() throws Exception {
        BenchConfig config = config();
        List<Scenario> chosen = chosen();
        try (BenchRun run = new BenchRun(config)) {
            run.migrate();
            run.tasks().requireDedicated(config.wipe());
            Log.line("database " + run.db().id() + ", scenarios "
                    + chosen.stream().map(Scenario::name).toList() + (smoke ? " (smoke)" : ""));
            List<Result> results = new ArrayList<>();
            for (Scenario scenario : chosen) {
                long start = System.nanoTime();
                results.addAll(scenario.run(run));
                Log.line(scenario.name() + " done in " + (System.nanoTime() - start) / 1_000_000_000 + " s");
            }
            if (!keep) {
                run.tasks().reset();
            }
            new Report(Ratios.apply(results), run).write(System.out);
        }
        return 0;
    }

    private BenchConfig config() {
        BenchConfig c = new BenchConfig(
                url,
                user,
                password,
                scenarios,
                workers,
                processes,
                fixedWorkers,
                claimBatch,
                Duration.ofMillis(pollMillis),
                tasks,
                enqueueTasks,
                latencyRate,
                latencySeconds,
                scaleMin,
                scaleMax,
                scaleBatch,
                soakTasks,
                Duration.ofSeconds(soakWindowSeconds),
                peerTasks,
                out,
                wipe,
                Duration.ofMillis(slowListenerMillis),
                schedules,
                scheduleCron,
                scheduleRounds,
                scheduleEngines,
                scheduleBatch,
                ceilingWorkers,
                ceilingBatches,
                ceilingWriters,
                ceilingSimple,
                jobRunrTasks,
                Duration.ofMillis(jobRunrPollMillis),
                historyTasks,
                historyWorkers,
                waitingTasks,
                chains,
                limitsWaiting,
                limitsRuns,
                limitsVariants,
                workload.workload());
        return smoke ? c.smoke() : c;
    }

    private List<Scenario> chosen() {
        LinkedHashSet<String> names = new LinkedHashSet<>();
        for (String s : scenarios) {
            if (s.equals("all")) {
                names.addAll(BenchConfig.ALL);
            } else if (SCENARIOS.containsKey(s)) {
                names.add(s);
            } else {
                throw new CommandLine.ParameterException(
                        new CommandLine(this),
                        "Unknown scenario '" + s + "'; use one of " + SCENARIOS.keySet() + " or all");
            }
        }
        // Baselines first, so a long run shows them before what is compared to them; then those that
        // "all" leaves out, in the order given.
        List<Scenario> out = new ArrayList<>();
        BenchConfig.ALL.stream().filter(names::contains).map(SCENARIOS::get).forEach(out::add);
        names.stream()
                .filter(n -> !BenchConfig.ALL.contains(n))
                .map(SCENARIOS::get)
                .forEach(out::add);
        return out;
    }
}
