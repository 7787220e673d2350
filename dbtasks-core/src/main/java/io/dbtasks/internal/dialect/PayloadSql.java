package io.dbtasks.internal.dialect;

import java.util.List;

/**
 * How a task search matches a payload field in SQL ({@link Dialect#payloadSql}).
 *
 * @param source what the search selects from: {@code dbtasks_task}, or a subquery aliased so
 * @param sourceArgs the bind values of {@code source}, in order
 * @param condition a condition for the WHERE clause
 * @param conditionArgs the bind values of {@code condition}, in order
 */
public record PayloadSql(String source, List<Object> sourceArgs, String condition, List<Object> conditionArgs) {
    public PayloadSql {
        sourceArgs = List.copyOf(sourceArgs);
        conditionArgs = List.copyOf(conditionArgs);
    }
}
