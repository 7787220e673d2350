package io.dbtasks.server.api;

import io.dbtasks.server.web.Problems;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * Refuses text no database stores faithfully: NUL (U+0000; PostgreSQL rejects it in text) and lone
 * UTF-16 surrogates (not Unicode characters; MariaDB and PostgreSQL reject or mangle them). Checked
 * before anything reaches the database, so each gets a 400 naming the field on every database.
 */
final class TextChecks {
    private TextChecks() {}

    /**
     * @param field the field's name in the request, e.g. {@code "queue"}
     * @param value its value, or {@code null}
     * @throws BadRequestException if the value holds NUL or a lone surrogate
     */
    static void check(String field, String value) {
        String problem = problem(value);
        if (problem != null) {
            throw new BadRequestException("'" + Problems.quote(field) + "' " + problem);
        }
    }

    /**
     * Checks every property name and string value of a JSON tree.
     *
     * @param path the tree's name in the request, e.g. {@code "payload"}
     * @param node the tree, or {@code null}
     * @throws BadRequestException naming the first bad property, e.g. {@code 'payload.items[2].name'}
     */
    static void check(String path, JsonNode node) {
        if (node == null) {
            return;
        }
        if (node.isString()) {
            check(path, node.asString());
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                check(path + "[" + i + "]", node.get(i));
            }
        } else if (node.isObject()) {
            for (Map.Entry<String, JsonNode> e : node.properties()) {
                String problem = problem(e.getKey());
                if (problem != null) {
                    throw new BadRequestException("A property name in '" + Problems.quote(path) + "' " + problem);
                }
                check(path + "." + e.getKey(), e.getValue());
            }
        }
    }

    private static String problem(String value) {
        if (value == null) {
            return null;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\0') {
                return "contains a NUL character (U+0000) at position " + i + "; remove it";
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                    i++;
                    continue;
                }
                return "contains a lone surrogate (an unpaired \\u" + Integer.toHexString(c) + ") at position " + i
                        + "; send valid Unicode";
            }
            if (Character.isLowSurrogate(c)) {
                return "contains a lone surrogate (an unpaired \\u" + Integer.toHexString(c) + ") at position " + i
                        + "; send valid Unicode";
            }
        }
        return null;
    }
}
