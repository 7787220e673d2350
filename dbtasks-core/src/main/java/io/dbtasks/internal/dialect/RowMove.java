package io.dbtasks.internal.dialect;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * A move of task rows into another partition written as a DELETE and an INSERT in one statement:
 * {@code WITH from AS (DELETE ... RETURNING ...) INSERT INTO dbtasks_task (...) SELECT ... FROM
 * from}, the INSERT carrying every column of the deleted row ({@link Dialect#TASK_TABLE_COLUMNS})
 * except those a SET list gives new values. PostgreSQL runs an UPDATE that changes the partition key
 * as such a delete and insert too, but a transaction that then locks the old row version (a claim's
 * {@code FOR UPDATE SKIP LOCKED} that read it before the move) fails with a serialization error;
 * after a DELETE it finds the row gone and passes over it ({@link
 * Dialect#movesRowsByDeleteAndInsert()}).
 *
 * <p>Stateless; thread-safe.
 */
public final class RowMove {
    private RowMove() {}

    /**
     * @param assignments a SET list whose column references name the deleted row's columns
     * @param from the name of the CTE of deleted rows
     * @return {@code INSERT INTO dbtasks_task (every column) SELECT (each column, or its new value)
     *     FROM from}; its parameters are those of the assignments, in the order of the table's columns
     * @throws IllegalStateException if an assignment is not {@code column = expression} of a task
     *     column
     */
    public static String insertFrom(String assignments, String from) {
        LinkedHashMap<String, String> values = parse(assignments);
        List<String> select = new ArrayList<>(Dialect.TASK_TABLE_COLUMNS.size());
        for (String column : Dialect.TASK_TABLE_COLUMNS) {
            select.add(values.getOrDefault(column, column));
        }
        return "INSERT INTO dbtasks_task (" + String.join(", ", Dialect.TASK_TABLE_COLUMNS) + ") SELECT "
                + String.join(", ", select) + " FROM " + from;
    }

    /**
     * @param assignments a SET list
     * @return column to expression, in the list's order; commas inside parentheses or quotes are the
     *     expressions' own
     * @throws IllegalStateException if an assignment is not {@code column = expression} of a task
     *     column
     */
    public static LinkedHashMap<String, String> parse(String assignments) {
        LinkedHashMap<String, String> values = new LinkedHashMap<>();
        int depth = 0;
        boolean quoted = false;
        int start = 0;
        for (int i = 0; i <= assignments.length(); i++) {
            char ch = i < assignments.length() ? assignments.charAt(i) : ',';
            if (ch == '\'') {
                quoted = !quoted;
            } else if (!quoted && ch == '(') {
                depth++;
            } else if (!quoted && ch == ')') {
                depth--;
            } else if (!quoted && depth == 0 && ch == ',') {
                String one = assignments.substring(start, i).trim();
                int eq = one.indexOf(" = ");
                if (eq < 0) {
                    throw new IllegalStateException("not an assignment: " + one);
                }
                String column = one.substring(0, eq).trim();
                if (!Dialect.TASK_TABLE_COLUMNS.contains(column)) {
                    throw new IllegalStateException("not a column of dbtasks_task: " + column);
                }
                values.put(column, one.substring(eq + 3).trim());
                start = i + 1;
            }
        }
        return values;
    }

    /** @return the parameter marks of {@code sql} outside quotes */
    public static int marks(String sql) {
        int n = 0;
        boolean quoted = false;
        for (int i = 0; i < sql.length(); i++) {
            char ch = sql.charAt(i);
            if (ch == '\'') {
                quoted = !quoted;
            } else if (!quoted && ch == '?') {
                n++;
            }
        }
        return n;
    }
}
