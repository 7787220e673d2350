package io.dbtasks.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The run's charts as PNG, drawn with XChart: {@code throughput-<db>.png} (tasks/s against workers
 * for dbtasks, db-scheduler and JobRunr, the ceiling's best batch at each claimer thread count, and
 * the best ceiling of the sweep as a flat line, since every "x ceiling" divides by it), {@code latency-<db>.png} (the enqueue-to-start
 * distribution as percentiles) and {@code soak-<db>.png} (tasks/s per window). A chart without data
 * in this run is not drawn.
 */
final class Charts {
    private static final int WIDTH = 900;
    private static final int HEIGHT = 560;

    private final List<Result> results;
    private final BenchRun run;

    Charts(List<Result> results, BenchRun run) {
        this.results = results;
        this.run = run;
    }

    /** @return the files written */
    List<Path> write(Path dir) throws IOException {
        System.setProperty("java.awt.headless", "true");
        String db = run.db().id();
        List<Path> written = new ArrayList<>();
        XYChart throughput = throughput(db);
        if (throughput != null) {
            written.add(save(throughput, dir.resolve("throughput-" + db)));
        }
        if (!run.latencySamples().isEmpty()) {
            written.add(save(latency(db), dir.resolve("latency-" + db)));
        }
        if (!run.soakWindows().isEmpty()) {
            written.add(save(soak(db), dir.resolve("soak-" + db)));
        }
        return written;
    }

    private XYChart throughput(String db) {
        Map<String, List<double[]>> series = new LinkedHashMap<>();
        Map<Integer, Double> ceilingByWorkers = new TreeMap<>();
        for (Result r : results) {
            if (r.series().equals(Ceiling.SERIES)) {
                ceilingByWorkers.merge(r.workers(), r.tasksPerSecond(), Math::max);
            } else if (r.scenario().equals("burndown")
                    || r.scenario().equals("peer")
                    || r.scenario().equals(JobRunrPeer.NAME)) {
                series.computeIfAbsent(r.series(), k -> new ArrayList<>())
                        .add(new double[] {r.workers(), r.tasksPerSecond()});
            }
        }
        if (series.isEmpty() && ceilingByWorkers.isEmpty()) {
            return null;
        }
        XYChart chart = chart("Burn-down throughput on " + db, "workers (threads)", "tasks/s");
        if (!ceilingByWorkers.isEmpty()) {
            List<double[]> points = new ArrayList<>();
            ceilingByWorkers.forEach((w, tps) -> points.add(new double[] {w, tps}));
            chart.addSeries("ceiling (best batch per W)", column(points, 0), column(points, 1))
                    .setMarker(SeriesMarkers.DIAMOND);
            Result best = Ratios.bestCeiling(results).orElseThrow();
            double low = Math.min(
                    points.get(0)[0],
                    series.values().stream()
                            .flatMap(List::stream)
                            .mapToDouble(p -> p[0])
                            .min()
                            .orElse(points.get(0)[0]));
            double high = Math.max(
                    points.get(points.size() - 1)[0],
                    series.values().stream()
                            .flatMap(List::stream)
                            .mapToDouble(p -> p[0])
                            .max()
                            .orElse(0));
            chart.addSeries("best ceiling (" + best.config() + ")", new double[] {low, high}, new double[] {
                        best.tasksPerSecond(), best.tasksPerSecond()
                    })
                    .setMarker(SeriesMarkers.NONE);
        }
        series.forEach((name, points) -> {
            points.sort((a, b) -> Double.compare(a[0], b[0]));
            chart.addSeries(name, column(points, 0), column(points, 1)).setMarker(SeriesMarkers.CIRCLE);
        });
        return chart;
    }

    private XYChart latency(String db) {
        XYChart chart = chart("Enqueue-to-start latency on " + db, "percentile", "ms");
        int i = 0;
        for (double[] sorted : run.latencySamples()) {
            int points = Math.min(sorted.length, 1000);
            double[] x = new double[points];
            double[] y = new double[points];
            for (int p = 0; p < points; p++) {
                double q = (p + 1) / (double) points;
                x[p] = q * 100;
                y[p] = Result.Percentiles.at(sorted, q);
            }
            chart.addSeries("run " + ++i + " (" + sorted.length + " tasks)", x, y)
                    .setMarker(SeriesMarkers.NONE);
        }
        return chart;
    }

    private XYChart soak(String db) {
        List<double[]> points = new ArrayList<>();
        for (BenchRun.SoakWindow w : run.soakWindows()) {
            points.add(new double[] {w.endSecond(), w.tasksPerSecond()});
        }
        XYChart chart = chart("Soak throughput per window on " + db, "seconds", "tasks/s");
        chart.addSeries("dbtasks W=" + run.config().fixedWorkers(), column(points, 0), column(points, 1))
                .setMarker(SeriesMarkers.CIRCLE);
        return chart;
    }

    private static XYChart chart(String title, String x, String y) {
        XYChart chart = new XYChartBuilder()
                .width(WIDTH)
                .height(HEIGHT)
                .title(title)
                .xAxisTitle(x)
                .yAxisTitle(y)
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
        chart.getStyler().setYAxisMin(0.0);
        return chart;
    }

    private static double[] column(List<double[]> points, int index) {
        return points.stream().mapToDouble(p -> p[index]).toArray();
    }

    private static Path save(XYChart chart, Path withoutExtension) throws IOException {
        BitmapEncoder.saveBitmap(chart, withoutExtension.toString(), BitmapEncoder.BitmapFormat.PNG);
        return Path.of(withoutExtension + ".png");
    }
}
