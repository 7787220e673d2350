package io.dbtasks.server.dashboard;

import io.dbtasks.AttemptsPerMinute;
import io.dbtasks.DbTasks;
import io.dbtasks.QueueStateCount;
import io.dbtasks.TaskIds;
import io.dbtasks.TaskQuery;
import io.dbtasks.TaskSlice;
import io.dbtasks.TaskStatus;
import io.dbtasks.TaskSummary;
import io.dbtasks.ToolTable;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * The dashboard's reads, through the core's query API ({@link DbTasks#searchSummaries}, {@link
 * DbTasks#stateCounts()} and the like): keyset pages with every filter, payload search, the id walk
 * of bulk actions, the overview aggregates and the toolkit's tables, in the shapes the pages show.
 * Read-only; every change goes through {@link DbTasks} too. The SQL, its indexes and the payload
 * search per database are the core's ({@code TaskQuery} says how paging and filters behave).
 *
 * <p>Thread-safe.
 */
@Component
public class DashboardStore {
    private final DbTasks dbTasks;
    /** The longest one statement of a task search may take, so no search holds a connection long. */
    private final Duration searchTimeout;

    /**
     * @param dbTasks the engine
     * @param searchTimeout the longest a task search may take ({@code dbtasks.dashboard.search-timeout},
     *     default 15 s), in whole seconds, at least one
     */
    public DashboardStore(DbTasks dbTasks, @Value("${dbtasks.dashboard.search-timeout:15s}") Duration searchTimeout) {
        this.dbTasks = dbTasks;
        this.searchTimeout = Duration.ofSeconds(Math.max(1, searchTimeout.toSeconds()));
    }

    /**
     * One page of a keyset listing.
     *
     * @param rows the tasks, newest first, each last error cut to 200 characters
     * @param next the cursor of the next page, or {@code null} at the end
     * @param scanLimited whether an H2 payload search stopped at its scan limit (more may match)
     */
    public record TaskPage(List<TaskSummary> rows, Long next, boolean scanLimited) {}

    /**
     * @param search the filter
     * @param before the cursor: only ids below it; {@code null} for the first page
     * @param size rows per page
     * @return the page
     */
    public TaskPage list(TaskSearch search, Long before, int size) {
        TaskSlice<TaskSummary> slice = dbTasks.searchSummaries(query(search, before), size);
        return new TaskPage(
                slice.items().stream().map(DashboardStore::withShortError).toList(), slice.next(), slice.scanLimited());
    }

    /**
     * One step of a walk over a filter.
     *
     * @param ids the matching ids, newest first
     * @param lastScanned the lowest id looked at (the next cursor), or {@code null} at the end
     */
    public record IdBatch(List<Long> ids, Long lastScanned) {}

    /**
     * Ids of the tasks a filter matches below a cursor, newest first, looking at up to {@code size}
     * rows; the bulk actions walk a filter with it.
     */
    public IdBatch ids(TaskSearch search, Long before, int size) {
        TaskIds ids = dbTasks.searchIds(query(search, before), size);
        return new IdBatch(ids.ids(), ids.next());
    }

    /**
     * Counts the tasks a filter matches: one {@code count(*)}, run only when an operator asks for a
     * bulk action's preview, never per page load.
     */
    public long count(TaskSearch search) {
        return dbTasks.count(query(search, null));
    }

    private TaskQuery query(TaskSearch search, Long before) {
        return search.toQuery().toBuilder()
                .before(before)
                .timeout(searchTimeout)
                .build();
    }

    private static TaskSummary withShortError(TaskSummary t) {
        return new TaskSummary(
                t.id(),
                t.queue(),
                t.kind(),
                t.status(),
                t.attempt(),
                t.maxAttempts(),
                t.key(),
                t.reference(),
                t.runAt(),
                t.createdAt(),
                t.finishedAt(),
                abbreviate(t.lastError(), 200),
                t.cancelRequested(),
                t.leaseOwner(),
                t.concurrencyKey());
    }

    static String abbreviate(String s, int max) {
        return s == null || s.length() <= max ? s : s.substring(0, max - 1) + "…";
    }

    // --- overview ---------------------------------------------------------------------------------

    /** Tasks of one state in one queue, and for PENDING the earliest due time. */
    public record StateCount(String queue, TaskStatus status, long count, Instant earliestRunAt) {}

    /**
     * The one aggregate behind the overview: counts by queue and state, and the earliest run time of
     * each queue's PENDING tasks. A full scan on a large table, so {@link OverviewSnapshots} runs it
     * in the background at an interval, never per page load.
     */
    public List<StateCount> countByQueueAndState() {
        return dbTasks.stateCounts().stream()
                .map((QueueStateCount c) -> new StateCount(c.queue(), c.status(), c.count(), c.earliestRunAt()))
                .toList();
    }

    /** Attempts finished per minute, by outcome group. */
    public record MinuteOutcomes(long minute, long succeeded, long failed) {}

    /** @return the highest attempt id, 0 when there are none */
    public long maxAttemptId() {
        return dbTasks.maxAttemptId();
    }

    /**
     * Attempts with {@code after < id <= upTo}, finished at or after {@code since}, counted per
     * minute (epoch minute of {@code finished_at}): by primary-key range, so each refresh reads only
     * the attempts written since the last one.
     */
    public List<MinuteOutcomes> outcomesPerMinute(long after, long upTo, Instant since) {
        return dbTasks.attemptsPerMinute(after, upTo, since).stream()
                .map((AttemptsPerMinute m) -> new MinuteOutcomes(m.minute(), m.succeeded(), m.failed()))
                .toList();
    }

    /** @return the database's clock */
    public Instant databaseNow() {
        return dbTasks.databaseNow();
    }

    // --- locks, guards, inbox ---------------------------------------------------------------------

    /** @return up to {@code limit} lease locks, newest first, as column name to value */
    public List<Map<String, Object>> locks(int limit) {
        return dbTasks.recentRows(ToolTable.LOCKS, limit);
    }

    /** @return up to {@code limit} run-once guards, newest change first, as column name to value */
    public List<Map<String, Object>> guards(int limit) {
        return dbTasks.recentRows(ToolTable.GUARDS, limit);
    }

    /** @return up to {@code limit} processed inbox messages, newest first, as column name to value */
    public List<Map<String, Object>> inbox(int limit) {
        return dbTasks.recentRows(ToolTable.INBOX, limit);
    }

    /** One batch, newest first. */
    public record BatchRow(long id, String kind, String name, int chunks, Instant createdAt) {}

    /**
     * The newest batches (the core API finds a batch by id but does not list them).
     *
     * @param limit at most this many
     * @return the batches, newest first
     */
    public List<BatchRow> batches(int limit) {
        return dbTasks.recentRows(ToolTable.BATCHES, limit).stream()
                .map(r -> new BatchRow(
                        ((Number) r.get("id")).longValue(),
                        (String) r.get("kind"),
                        (String) r.get("name"),
                        ((Number) r.get("chunks")).intValue(),
                        (Instant) r.get("created_at")))
                .toList();
    }
}
