package io.dbtasks.server.idempotency;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The response headers a replay repeats besides Content-Type: {@code Location} and any {@code
 * Warning} (such as "no live instance serves this queue"). They are kept in the record's {@code
 * location} column: a bare URI when there is no warning (as records always were), otherwise one
 * {@code Name: value} line per header. Header values hold no line breaks (the servlet container
 * refuses them), so the lines cannot be confused. A warning that would make the text longer than
 * the column ({@value #MAX_LENGTH} characters) is left out.
 *
 * @param location the Location header, or {@code null}
 * @param warnings the Warning headers, in order; empty for none
 */
record ReplayHeaders(String location, List<String> warnings) {
    /** The length of the {@code location} column. */
    static final int MAX_LENGTH = 1000;

    private static final String LOCATION = "Location: ";
    private static final String WARNING = "Warning: ";

    /**
     * @param location the response's Location, or {@code null}
     * @param warnings its Warning headers
     * @return the column's text, or {@code null} for neither
     */
    static String encode(String location, Collection<String> warnings) {
        if (warnings == null || warnings.isEmpty()) {
            return location;
        }
        StringBuilder out = new StringBuilder();
        if (location != null) {
            out.append(LOCATION).append(location);
        }
        for (String w : warnings) {
            int extra = (out.isEmpty() ? 0 : 1) + WARNING.length() + w.length();
            if (out.length() + extra > MAX_LENGTH || w.indexOf('\n') >= 0 || w.indexOf('\r') >= 0) {
                continue;
            }
            if (!out.isEmpty()) {
                out.append('\n');
            }
            out.append(WARNING).append(w);
        }
        return out.isEmpty() ? null : out.toString();
    }

    /**
     * @param stored the column's text, or {@code null}
     * @return the headers it holds
     */
    static ReplayHeaders decode(String stored) {
        if (stored == null) {
            return new ReplayHeaders(null, List.of());
        }
        if (!stored.startsWith(LOCATION) && !stored.startsWith(WARNING)) {
            return new ReplayHeaders(stored, List.of()); // a bare Location
        }
        String location = null;
        List<String> warnings = new ArrayList<>();
        for (String line : stored.split("\n")) {
            if (line.startsWith(LOCATION)) {
                location = line.substring(LOCATION.length());
            } else if (line.startsWith(WARNING)) {
                warnings.add(line.substring(WARNING.length()));
            }
        }
        return new ReplayHeaders(location, List.copyOf(warnings));
    }
}
