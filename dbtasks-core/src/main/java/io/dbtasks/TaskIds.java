package io.dbtasks;

import java.util.List;

/**
 * One step of a walk over the tasks a {@link TaskQuery} matches ({@link DbTasks#searchIds}).
 *
 * @param ids the matching ids, newest first; may be empty while {@code next} is not {@code null}
 *     (a payload search on H2 looked at rows of which none matched)
 * @param next the lowest id looked at, the cursor of the next step; {@code null} at the end
 */
public record TaskIds(List<Long> ids, Long next) {
    public TaskIds {
        ids = List.copyOf(ids);
    }
}
