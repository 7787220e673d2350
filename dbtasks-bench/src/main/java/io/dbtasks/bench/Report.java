package io.dbtasks.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * What a run leaves: the table on standard output, and in the output folder {@code
 * results-<db>.csv}, the same table as {@code results-<db>.md}, {@code soak-<db>.csv} and the charts
 * ({@link Charts}). Above the table a summary names the best ceiling (the figure every "x ceiling"
 * divides by, and the W and batch that gave it) and the best burn-down against it.
 */
final class Report {
    static final List<String> COLUMNS = List.of(
            "scenario",
            "database",
            "config",
            "tasks",
            "seconds",
            "tasks_per_s",
            "ratio_to_ceiling",
            "ratio_to_peer",
            "ratio_to_jobrunr",
            "p50_ms",
            "p95_ms",
            "p99_ms");

    private final List<Result> results;
    private final BenchRun run;

    Report(List<Result> results, BenchRun run) {
        this.results = results;
        this.run = run;
    }

    /** Prints the table, writes the files and the charts. @return the CSV file */
    Path write(PrintStream out) throws IOException {
        out.println();
        out.print(summary());
        out.print(table());
        Path dir = run.config().out();
        Files.createDirectories(dir);
        String db = run.db().id();
        Path csv = dir.resolve("results-" + db + ".csv");
        Files.writeString(csv, csv(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("results-" + db + ".md"), summary() + "\n" + markdown(), StandardCharsets.UTF_8);
        if (!run.soakWindows().isEmpty()) {
            StringBuilder soak = new StringBuilder("end_second,tasks,seconds,tasks_per_s\n");
            for (BenchRun.SoakWindow w : run.soakWindows()) {
                soak.append(String.format(
                        Locale.ROOT, "%.1f,%d,%.3f,%.1f%n", w.endSecond(), w.tasks(), w.seconds(), w.tasksPerSecond()));
            }
            Files.writeString(dir.resolve("soak-" + db + ".csv"), soak, StandardCharsets.UTF_8);
        }
        for (Path chart : new Charts(results, run).write(dir)) {
            out.println("chart: " + chart);
        }
        out.println("csv:   " + csv);
        return csv;
    }

    /**
     * @return the best ceiling and what it came from, and the best burn-down and each peer's best
     *     against it, a line each; empty without a ceiling
     */
    String summary() {
        Optional<Result> best = Ratios.bestCeiling(results);
        if (best.isEmpty()) {
            return "";
        }
        Result ceiling = best.get();
        StringBuilder sb = new StringBuilder();
        sb.append("ceiling: ")
                .append(fmt("%.0f", ceiling.tasksPerSecond()))
                .append(" tasks/s, the best of ")
                .append(results.stream()
                        .filter(r -> r.series().equals(Ceiling.SERIES))
                        .count())
                .append(" sweep points, at ")
                .append(ceiling.config())
                .append("; every x ceiling divides by it\n");
        Optional<Result> rerun =
                results.stream().filter(r -> r.series().equals(Ceiling.RERUN)).findFirst();
        results.stream()
                .filter(r -> r.series().equals(Ceiling.WITH_ATTEMPTS))
                .findFirst()
                .ifPresent(r -> sb.append("ceiling with attempt rows: ")
                        .append(fmt("%.0f", r.tasksPerSecond()))
                        .append(" tasks/s")
                        .append(rerun.map(p -> " = " + fmt("%.2f", r.tasksPerSecond() / p.tasksPerSecond())
                                        + " x the same point rerun without them (" + fmt("%.0f", p.tasksPerSecond())
                                        + " tasks/s), alternating")
                                .orElse(""))
                        .append(results.stream()
                                .filter(b -> b.scenario().equals("burndown"))
                                .mapToDouble(Result::tasksPerSecond)
                                .max()
                                .stream()
                                .mapToObj(
                                        b -> "; the best burn-down is " + fmt("%.2f", b / r.tasksPerSecond()) + " x it")
                                .findFirst()
                                .orElse(""))
                        .append('\n'));
        best(sb, "burndown", "dbtasks burn-down");
        best(sb, "peer", "db-scheduler");
        best(sb, JobRunrPeer.NAME, "JobRunr");
        return sb.toString();
    }

    private void best(StringBuilder sb, String scenario, String label) {
        results.stream()
                .filter(r -> r.scenario().equals(scenario) && r.ratioToCeiling() != null)
                .max(Comparator.comparingDouble(Result::tasksPerSecond))
                .ifPresent(r -> sb.append(label)
                        .append(": best ")
                        .append(fmt("%.0f", r.tasksPerSecond()))
                        .append(" tasks/s at ")
                        .append(r.config())
                        .append(" = ")
                        .append(fmt("%.2f", r.ratioToCeiling()))
                        .append(" x ceiling\n"));
    }

    String table() {
        List<List<String>> rows = rows();
        int[] width = new int[COLUMNS.size()];
        for (List<String> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                width[i] = Math.max(width[i], row.get(i).length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int r = 0; r < rows.size(); r++) {
            List<String> row = rows.get(r);
            for (int i = 0; i < row.size(); i++) {
                String cell = row.get(i);
                boolean left = i < 3;
                sb.append(
                        left ? String.format("%-" + width[i] + "s", cell) : String.format("%" + width[i] + "s", cell));
                sb.append(i < row.size() - 1 ? "  " : "\n");
            }
            if (r == 0) {
                for (int i = 0; i < width.length; i++) {
                    sb.append("-".repeat(width[i])).append(i < width.length - 1 ? "  " : "\n");
                }
            }
        }
        return sb.toString();
    }

    String markdown() {
        List<List<String>> rows = rows();
        StringBuilder sb = new StringBuilder();
        for (int r = 0; r < rows.size(); r++) {
            sb.append("| ").append(String.join(" | ", rows.get(r))).append(" |\n");
            if (r == 0) {
                sb.append("|").append(" --- |".repeat(COLUMNS.size())).append("\n");
            }
        }
        return sb.toString();
    }

    String csv() {
        StringBuilder sb = new StringBuilder(String.join(",", COLUMNS)).append("\n");
        for (Result r : results) {
            sb.append(String.join(
                            ",",
                            r.scenario(),
                            r.database(),
                            '"' + r.config().replace("\"", "\"\"") + '"',
                            String.valueOf(r.tasks()),
                            fmt("%.3f", r.seconds()),
                            fmt("%.1f", r.tasksPerSecond()),
                            opt("%.3f", r.ratioToCeiling()),
                            opt("%.3f", r.ratioToPeer()),
                            opt("%.3f", r.ratioToJobRunr()),
                            r.latency() == null ? "" : fmt("%.3f", r.latency().p50()),
                            r.latency() == null ? "" : fmt("%.3f", r.latency().p95()),
                            r.latency() == null ? "" : fmt("%.3f", r.latency().p99())))
                    .append("\n");
        }
        return sb.toString();
    }

    private List<List<String>> rows() {
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of(
                "scenario",
                "database",
                "config",
                "tasks",
                "seconds",
                "tasks/s",
                "x ceiling",
                "x db-scheduler",
                "x JobRunr",
                "p50 ms",
                "p95 ms",
                "p99 ms"));
        for (Result r : results) {
            rows.add(List.of(
                    r.scenario(),
                    r.database(),
                    r.config(),
                    String.valueOf(r.tasks()),
                    fmt("%.2f", r.seconds()),
                    fmt("%.0f", r.tasksPerSecond()),
                    r.ratioToCeiling() == null ? "-" : fmt("%.2f", r.ratioToCeiling()),
                    r.ratioToPeer() == null ? "-" : fmt("%.2f", r.ratioToPeer()),
                    r.ratioToJobRunr() == null ? "-" : fmt("%.2f", r.ratioToJobRunr()),
                    r.latency() == null ? "-" : fmt("%.1f", r.latency().p50()),
                    r.latency() == null ? "-" : fmt("%.1f", r.latency().p95()),
                    r.latency() == null ? "-" : fmt("%.1f", r.latency().p99())));
        }
        return rows;
    }

    private static String opt(String format, Double value) {
        return value == null ? "" : fmt(format, value);
    }

    private static String fmt(String format, double value) {
        return String.format(Locale.ROOT, format, value);
    }
}
