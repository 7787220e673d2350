package io.dbtasks.server.api;

import tools.jackson.core.JacksonException;

/** Describes where in a JSON document a Jackson error happened, without Java class names. */
final class JsonErrors {
    private JsonErrors() {}

    /**
     * @param root the name of the document's root in the message ({@code "payload"}), or {@code null}
     * @param e the error
     * @return {@code " at 'payload.items[2].amount'"}, or an empty string when the error has no path
     */
    static String at(String root, JacksonException e) {
        StringBuilder sb = new StringBuilder(root == null ? "" : root);
        for (JacksonException.Reference r : e.getPath()) {
            if (r.getPropertyName() != null) {
                sb.append(sb.length() == 0 ? "" : ".").append(r.getPropertyName());
            } else if (r.getIndex() >= 0) {
                sb.append('[').append(r.getIndex()).append(']');
            }
        }
        return e.getPath().isEmpty() ? "" : " at '" + sb + "'";
    }
}
