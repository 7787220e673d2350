package io.dbtasks.server.api;

import io.dbtasks.StoredText;
import io.dbtasks.server.web.Problems;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * Refuses text no database stores faithfully, by the core's one rule ({@link StoredText}): NUL
 * (U+0000) and lone UTF-16 surrogates, with a 400 naming the field. Every JSON body is checked so
 * already by {@link io.dbtasks.server.web.JsonBodyFilter}; this names the field of a value that
 * reaches a handler some other way.
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
        return StoredText.problem(value);
    }
}
