package io.dbtasks.internal.maintenance;

import io.dbtasks.DbTasksException;
import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import io.dbtasks.lock.LeaseLocks;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a churning PostgreSQL task table from ageing. Every claim and completion leaves a dead row
 * version and a dead entry at the head of the partial claim index; each later claim steps over
 * them until vacuum removes them. With autovacuum off or behind, a long burn-down slows as the dead
 * versions pile up; vacuuming the table regularly keeps it level.
 *
 * <p>It also keeps the planner from believing the table is small when it has grown. A statement
 * planned while the table was small keeps its plan until the statistics change, and a plan made for
 * a near-empty table reads the whole table by sequential scan to update the claimed or completed
 * rows. Tasks enqueued into a table emptied before a burst of load queue up behind such plans until
 * the statistics are refreshed, so the check must come early and often, not once after start.
 *
 * <p>Two checks, each of which, when it finds work, takes the cluster-wide lease lock {@value #LOCK}
 * (so that only one engine at a time does it; if another holds it the check is skipped) under a
 * lease of {@link #MAINTENANCE_LEASE}, renewed while the statement runs, and releases it afterwards.
 * A holder that cannot release it (stopped with its pool closed under it, or dead) blocks the others
 * for at most that lease:
 *
 * <ul>
 *   <li>{@link #run}, every vacuum interval: when the statistics collector counts {@link
 *       #DEAD_ROWS_THRESHOLD} dead rows or more, {@code VACUUM (ANALYZE)}.
 *   <li>{@link #checkStatistics}, every {@value #STATISTICS_CHECK_MILLIS} ms: when the table's file
 *       has grown past {@link #GROWTH_FACTOR} times the pages its statistics were taken at plus
 *       {@link #GROWTH_SLACK_PAGES}, {@code ANALYZE} (a sample of at most 3,000 rows: migration V14 sets
 *       the statistics target 10 on every column of the task table, where the default 100 would
 *       sample 30,000; so its cost does not grow with the table). The file size is read
 *       directly ({@code pg_relation_size}), so growth is seen at once rather than when the
 *       statistics collector next hears of it; a table growing from empty is analyzed about
 *       log2(size) times, then only when it doubles again. If an ANALYZE leaves the statistics as
 *       they were (PostgreSQL skips it with a warning when the user does not own the table), this
 *       check stops, with a warning, rather than try again every 500 ms.
 * </ul>
 */
public final class QueueTableVacuum {
    static final long DEAD_ROWS_THRESHOLD = 10_000;
    /**
     * Pages beyond {@link #GROWTH_FACTOR} times the statistics' page count that make them stale:
     * 64 pages of 8 KiB, about 2,000-4,000 task rows.
     */
    static final long GROWTH_SLACK_PAGES = 64;
    /** How many times the statistics' page count the table may reach before they are stale. */
    static final double GROWTH_FACTOR = 2.0;
    /** How often {@link #checkStatistics} looks, in milliseconds. */
    public static final long STATISTICS_CHECK_MILLIS = 500;

    static final String LOCK = "dbtasks.vacuum";
    /**
     * The lease {@link #LOCK} is held under, renewed every third of it while a VACUUM or ANALYZE
     * runs; what other engines wait at most when a holder stops or dies without releasing it.
     */
    static final Duration MAINTENANCE_LEASE = Duration.ofSeconds(30);

    private static final Logger log = LoggerFactory.getLogger(QueueTableVacuum.class);

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final LeaseLocks locks;
    private final BooleanSupplier stopped;
    /** Set once an ANALYZE left the statistics as they were: the statistics check stops. */
    private volatile boolean analyzeRefused;

    QueueTableVacuum(Jdbc jdbc, Dialect dialect, LeaseLocks locks) {
        this(jdbc, dialect, locks, () -> false);
    }

    /**
     * @param stopped whether the engine has begun to stop: a check it interrupts (its lease renewal
     *     already closed) is then expected, and logged at debug rather than as a failure
     */
    public QueueTableVacuum(Jdbc jdbc, Dialect dialect, LeaseLocks locks, BooleanSupplier stopped) {
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.locks = locks;
        this.stopped = stopped;
    }

    /** @return whether an ANALYZE left the statistics unchanged, which stopped the statistics check */
    boolean analyzeRefused() {
        return analyzeRefused;
    }

    /** @return whether this database needs it at all */
    public boolean applies() {
        return dialect.tableVacuum().isPresent();
    }

    /** Vacuums the table if it holds {@link #DEAD_ROWS_THRESHOLD} dead rows or more. */
    public void run() {
        maintain(false);
    }

    /** Refreshes the table's statistics if it has outgrown them; see the class comment. */
    public void checkStatistics() {
        maintain(true);
    }

    /**
     * @param statistics true: analyze if the table outgrew its statistics; false: vacuum if it holds
     *     too many dead rows
     */
    private void maintain(boolean statistics) {
        if ((statistics && analyzeRefused) || stopped.getAsBoolean()) {
            return;
        }
        Dialect.TableVacuum sql = dialect.tableVacuum().orElseThrow();
        try {
            long[] sizes = sizes(sql);
            long dead = sizes[0];
            boolean due = statistics ? outgrown(sizes[1], sizes[2]) : dead >= DEAD_ROWS_THRESHOLD;
            if (!due) {
                return;
            }
            // Held under a short lease, renewed while the statement runs: if this engine stops or dies
            // without releasing it (its pool closed under a running ANALYZE), the others wait at most
            // this long, not the ten minutes a one-off lease long enough for any VACUUM would take.
            locks.withLock(LOCK, MAINTENANCE_LEASE, lease -> {
                long start = System.nanoTime();
                jdbc.withConnection(statistics ? "Analyze the task table" : "Vacuum the task table", c -> {
                    // A big table may take minutes: exempt from statementTimeout (restored on return).
                    c.setNetworkTimeout(Runnable::run, 0);
                    try (Statement s = c.createStatement()) {
                        s.execute(statistics ? sql.analyze() : sql.vacuum());
                    }
                    return null;
                });
                if (statistics && sizes(sql)[2] == sizes[2]) {
                    // PostgreSQL skips ANALYZE with a warning, not an error, where the user does not own
                    // the table: without this the engine would try again every check.
                    analyzeRefused = true;
                    log.warn("ANALYZE of dbtasks_task left its statistics unchanged (is the database user not the"
                            + " table's owner?); the engine stops checking them, and plans made while the table was"
                            + " small may stay until autovacuum analyzes it. Run the engine as the table's owner,"
                            + " or keep autovacuum on for it");
                } else if (statistics) {
                    log.debug(
                            "Analyzed dbtasks_task ({} pages, statistics had {}) in {} ms",
                            sizes[1],
                            sizes[2],
                            (System.nanoTime() - start) / 1_000_000);
                } else {
                    log.debug(
                            "Vacuumed dbtasks_task ({} dead rows) in {} ms",
                            dead,
                            (System.nanoTime() - start) / 1_000_000);
                }
            }); // false: another engine is vacuuming or analyzing
        } catch (DbTasksException | IllegalStateException e) {
            if (stopped.getAsBoolean()) {
                log.debug("Table maintenance interrupted by the engine's stop", e);
                return;
            }
            log.warn(
                    statistics
                            ? "Analyze of the task table failed; plans may stay those of a smaller table"
                            : "Vacuum of the task table failed; claims may slow down until autovacuum runs",
                    e);
        }
    }

    /** @return dead rows, pages now and pages at the last statistics; see {@link Dialect.TableVacuum} */
    private long[] sizes(Dialect.TableVacuum sql) {
        return jdbc.withConnection("Read the task table's size", c -> {
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery(sql.sizeQuery())) {
                return rs.next() ? new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)} : new long[3];
            }
        });
    }

    /**
     * @param pages the table's size now, in pages
     * @param statisticsPages its size when its statistics were last taken, in pages (0 if never)
     * @return whether it has grown past {@link #GROWTH_FACTOR} times that plus {@link
     *     #GROWTH_SLACK_PAGES}
     */
    static boolean outgrown(long pages, long statisticsPages) {
        return pages > GROWTH_SLACK_PAGES + GROWTH_FACTOR * Math.max(0, statisticsPages);
    }
}
