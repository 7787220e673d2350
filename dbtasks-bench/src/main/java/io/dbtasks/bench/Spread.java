package io.dbtasks.bench;

import java.util.List;
import java.util.Locale;

/** The median and range of a few repeated measurements, as the scenarios log them. */
final class Spread {
    private Spread() {}

    /**
     * @param values one or more measurements
     * @return their median (the mean of the middle two for an even count)
     * @throws IllegalArgumentException if there are none
     */
    static double median(List<Double> values) {
        if (values.isEmpty()) {
            throw new IllegalArgumentException("no measurements to take the median of");
        }
        List<Double> sorted = values.stream().sorted().toList();
        int m = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(m) : (sorted.get(m - 1) + sorted.get(m)) / 2;
    }

    /**
     * @param values one or more measurements, one per run
     * @param format how to print one of them, for {@link String#format}
     * @return {@code median M (min A, max B, N runs)}
     * @throws IllegalArgumentException if there are none
     */
    static String summary(List<Double> values, String format) {
        return summary(values, format, "runs");
    }

    /**
     * @param values one or more measurements
     * @param format how to print one of them, for {@link String#format} (in {@link Locale#ROOT})
     * @param what what the count of measurements counts, plural ("runs", "samples")
     * @return {@code median M (min A, max B, N what)}
     * @throws IllegalArgumentException if there are none
     */
    static String summary(List<Double> values, String format, String what) {
        List<Double> sorted = values.stream().sorted().toList();
        return "median " + String.format(Locale.ROOT, format, median(values)) + " (min "
                + String.format(Locale.ROOT, format, sorted.get(0)) + ", max "
                + String.format(Locale.ROOT, format, sorted.get(sorted.size() - 1)) + ", " + values.size() + " " + what
                + ")";
    }
}
