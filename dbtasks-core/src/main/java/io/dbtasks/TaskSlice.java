package io.dbtasks;

import java.util.List;

/**
 * One page of a keyset search ({@link DbTasks#search}, {@link DbTasks#searchSummaries}).
 *
 * @param items the rows, newest first
 * @param next the cursor of the next page (pass it to {@link TaskQuery#before(Long)}), or {@code
 *     null} when there are no more rows
 * @param scanLimited whether a payload search that the database cannot run in SQL (H2) stopped at
 *     its scan limit: {@code next} then resumes the scan, and more rows may match
 * @param <T> the row type
 */
public record TaskSlice<T>(List<T> items, Long next, boolean scanLimited) {
    public TaskSlice {
        items = List.copyOf(items);
    }
}
