package io.dbtasks;

import org.jspecify.annotations.Nullable;

/**
 * The one rule for text the library stores, applied by every public API that takes a string (task
 * requests, job definitions, batches, schedules, queue names, keys, locks, guards, the inbox) and by
 * the server for every field of every request:
 *
 * <ul>
 *   <li><b>text</b> holds no NUL (U+0000) and no lone UTF-16 surrogate: PostgreSQL refuses NUL in
 *       {@code text}, H2 would store it, MariaDB cuts or mangles both, and a lone surrogate is not a
 *       Unicode character, so neither can be stored the same way on every database;
 *   <li>a <b>name</b> (a kind, a queue, a job code or business type, a schedule or lock name) is
 *       text that also holds no control character (U+0000 to U+001F and U+007F to U+009F), so a
 *       name written to a log, a header or a page cannot break its line.
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
public final class StoredText {
    private StoredText() {}

    /**
     * @param field the field's name, as the caller knows it (e.g. {@code "queue"}), for the message
     * @param value the value, or {@code null} (accepted: whether a field may be {@code null} is its
     *     own rule)
     * @return {@code value}
     * @throws IllegalArgumentException naming {@code field} if {@code value} holds a NUL character
     *     or a lone surrogate
     */
    public static @Nullable String requireText(String field, @Nullable String value) {
        String problem = problem(value);
        if (problem != null) {
            throw new IllegalArgumentException("'" + field + "' " + problem);
        }
        return value;
    }

    /**
     * @param field the field's name, as the caller knows it, for the message
     * @param value the value, or {@code null} (accepted)
     * @return {@code value}
     * @throws IllegalArgumentException naming {@code field} if {@code value} holds a NUL character,
     *     a lone surrogate or another control character
     */
    public static @Nullable String requireName(String field, @Nullable String value) {
        String problem = nameProblem(value);
        if (problem != null) {
            throw new IllegalArgumentException("'" + field + "' " + problem);
        }
        return value;
    }

    /**
     * @param value a value, or {@code null}
     * @return what is wrong with it as text, e.g. {@code "contains a NUL character (U+0000) at
     *     position 3; remove it"}, or {@code null} if nothing is (or it is {@code null})
     */
    public static @Nullable String problem(@Nullable String value) {
        return problem(value, false);
    }

    /**
     * @param value a value, or {@code null}
     * @return what is wrong with it as a name, or {@code null} if nothing is (or it is {@code null})
     */
    public static @Nullable String nameProblem(@Nullable String value) {
        return problem(value, true);
    }

    /** The longest value {@link #forLog} writes, in characters. */
    public static final int MAX_LOGGED = 200;

    /**
     * A value a caller gave, made safe to write into a log line: control characters (line breaks
     * included) and the Unicode line and paragraph separators are written as escapes ({@code \n},
     * {@code \r}, {@code \t}, {@code \u2028}...), so text from a client cannot end the line and
     * forge the next one; cut to {@value #MAX_LOGGED} characters.
     *
     * @param value a value, or {@code null}
     * @return the value as one safe line, or {@code "null"}
     */
    public static String forLog(@Nullable Object value) {
        String s = String.valueOf(value);
        StringBuilder b = new StringBuilder(Math.min(s.length(), MAX_LOGGED) + 16);
        int i = 0;
        for (; i < s.length() && b.length() < MAX_LOGGED; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (Character.isHighSurrogate(c)
                            && i + 1 < s.length()
                            && Character.isLowSurrogate(s.charAt(i + 1))) {
                        b.append(c).append(s.charAt(++i));
                    } else if (Character.isISOControl(c)
                            || Character.isSurrogate(c)
                            || c == '\u2028'
                            || c == '\u2029') {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return i < s.length() ? b + "... (" + s.length() + " characters)" : b.toString();
    }

    private static @Nullable String problem(@Nullable String value, boolean name) {
        if (value == null) {
            return null;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\0') {
                return "contains a NUL character (U+0000) at position " + i + "; remove it";
            }
            if (Character.isHighSurrogate(c)
                    && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return "contains a lone surrogate (an unpaired \\u" + Integer.toHexString(c) + ") at position " + i
                        + "; send valid Unicode";
            } else if (name && Character.isISOControl(c)) {
                return "contains a control character (U+" + String.format("%04X", (int) c) + ") at position " + i
                        + "; a name must be printable: remove line breaks, tabs and other control characters";
            }
        }
        return null;
    }
}
