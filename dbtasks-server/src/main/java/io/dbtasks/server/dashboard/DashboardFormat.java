package io.dbtasks.server.dashboard;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import org.springframework.stereotype.Component;

/** Formatting helpers the templates call as {@code @dashboardFormat}. Thread-safe. */
@Component("dashboardFormat")
public class DashboardFormat {
    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

    /** @return the instant in UTC to the second, or an empty string */
    public String time(Instant t) {
        return t == null ? "" : TIME.format(t) + "Z";
    }

    /** @return a schedule's trigger as one line: a cron with its zone, or a fixed rate or delay */
    public String trigger(io.dbtasks.schedule.Trigger t) {
        if (t == null) {
            return "";
        }
        String period = t.period().map(this::age).orElse("");
        return switch (t.type()) {
            case CRON ->
                "cron " + t.expression().orElse("") + " ("
                        + t.zone().map(Object::toString).orElse("UTC") + ")";
            case FIXED_RATE -> "every " + period;
            case FIXED_DELAY -> period + " after the previous task";
        };
    }

    /** @return the instant as ISO-8601, for {@code datetime} attributes */
    public String iso(Instant t) {
        return t == null ? "" : t.toString();
    }

    /** @return a short human duration: 850 ms, 12 s, 4 min 3 s, 2 h 5 min, 3 d 4 h */
    public String age(Duration d) {
        if (d == null) {
            return "";
        }
        long ms = Math.max(0, d.toMillis());
        if (ms < 1000) {
            return ms + " ms";
        }
        long s = ms / 1000;
        if (s < 60) {
            return s + " s";
        }
        if (s < 3600) {
            return s / 60 + " min " + s % 60 + " s";
        }
        if (s < 86400) {
            return s / 3600 + " h " + (s % 3600) / 60 + " min";
        }
        return s / 86400 + " d " + (s % 86400) / 3600 + " h";
    }

    /** @return how long ago {@code t} was, from {@code now} */
    public String ago(Instant t, Instant now) {
        return t == null ? "" : age(Duration.between(t, now)) + " ago";
    }

    /** @return the number with thousands separators */
    public String count(long n) {
        return String.format("%,d", n);
    }
}
