package io.dbtasks.internal.schedule;

import io.dbtasks.internal.dialect.Dialect;
import io.dbtasks.internal.support.Jdbc;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds the schedules declared in code that no running engine declares, and resumes them when one
 * does again. A schedule declared in code ({@code DbTasks.Builder.schedule}, {@code @Recurring}) is
 * fired only by engines that declare it, the code that also handles its kind; so when that code is
 * removed its slots stop being fired, instead of failing one task per slot for want of a handler.
 *
 * <p>The protocol: an engine that finds a declared schedule it does not declare itself due for more
 * than {@link #GRACE} (no engine that declares it has fired it) holds it with a guarded UPDATE on
 * its version: paused with the reason {@value #NO_CODE}, its next slot kept. The engine whose UPDATE
 * wins logs the one warning, which names the schedule and how to delete it. An engine that declares
 * a held schedule resumes it (again version-guarded), and the slots missed meanwhile follow its
 * missed-slot policy. An operator's pause and resume clear the reason.
 */
final class HeldSchedules {
    private static final Logger log = LoggerFactory.getLogger(HeldSchedules.class);
    /** The reason stored in {@code dbtasks_schedule.paused_reason}. */
    static final String NO_CODE = "NO_CODE";
    /** How long a declared schedule may stay due before an engine that does not declare it holds it. */
    static final Duration GRACE = Duration.ofSeconds(30);

    private final Jdbc jdbc;
    private final Dialect dialect;
    private final Clock clock;
    private final ScheduleRows rows;
    private final List<String> declared;
    private final List<String> kinds;
    private final String orphansSql;
    private final String holdSql;
    private final String heldSql;
    private final String resumeSql;

    /**
     * @param declared the names this engine declares in code
     * @param kinds the task kinds this engine has handlers for: it fires (and resumes) a declared
     *     schedule of those kinds even if another engine declares it
     * @param clock the schedule clock, or {@code null} for the database's
     */
    HeldSchedules(Jdbc jdbc, Dialect dialect, ScheduleRows rows, Set<String> declared, Set<String> kinds, Clock clock) {
        this.rows = rows;
        this.jdbc = jdbc;
        this.dialect = dialect;
        this.clock = clock;
        this.declared = List.copyOf(declared);
        this.kinds = List.copyOf(kinds);
        String cutoff = clock == null ? dialect.nowPlusMillis() : "?";
        this.orphansSql =
                "SELECT name, task_kind, next_slot, version FROM dbtasks_schedule WHERE declared_in_code = TRUE"
                        + " AND paused = FALSE AND next_slot < " + cutoff + notMine();
        this.holdSql = "UPDATE dbtasks_schedule SET paused = TRUE, paused_reason = '" + NO_CODE
                + "', version = version + 1, updated_at = " + dialect.now() + " WHERE name = ? AND version = ?"
                + " AND paused = FALSE";
        this.heldSql = this.declared.isEmpty() && this.kinds.isEmpty()
                ? null
                : "SELECT " + ScheduleRows.DEFINITION + ", " + (clock == null ? dialect.now() : "?")
                        + " AS db_now FROM dbtasks_schedule s WHERE s.paused_reason = '" + NO_CODE + "' AND "
                        + mine("s", this.declared.size(), this.kinds.size());
        this.resumeSql = "UPDATE dbtasks_schedule SET paused = FALSE, paused_reason = NULL, next_slot = ?,"
                + " version = version + 1,"
                + " updated_at = " + dialect.now() + " WHERE name = ? AND version = ? AND paused_reason = '" + NO_CODE
                + "'";
    }

    /**
     * The condition under which a due row may be fired by this engine: not declared in code, or
     * declared by this engine.
     */
    static String firable(String alias, int declaredCount, int kindCount) {
        String p = alias.isEmpty() ? "" : alias + ".";
        return declaredCount == 0 && kindCount == 0
                ? p + "declared_in_code = FALSE"
                : "(" + p + "declared_in_code = FALSE OR " + mine(alias, declaredCount, kindCount) + ")";
    }

    /** Declared here or of a kind handled here; binds {@link #bindDeclared}'s values. */
    private static String mine(String alias, int declaredCount, int kindCount) {
        String p = alias.isEmpty() ? "" : alias + ".";
        String byName = declaredCount == 0 ? null : p + "name IN (" + marks(declaredCount) + ")";
        String byKind = kindCount == 0 ? null : p + "task_kind IN (" + marks(kindCount) + ")";
        if (byName == null) {
            return byKind;
        }
        return byKind == null ? byName : "(" + byName + " OR " + byKind + ")";
    }

    private String notMine() {
        return declared.isEmpty() && kinds.isEmpty() ? "" : " AND NOT " + mine("", declared.size(), kinds.size());
    }

    private static String marks(int n) {
        return String.join(", ", Collections.nCopies(n, "?"));
    }

    /** Binds the declared names, then the handled kinds, from {@code index}. @return the next index */
    int bindDeclared(PreparedStatement ps, int index) throws SQLException {
        for (String name : declared) {
            ps.setString(index++, name);
        }
        for (String kind : kinds) {
            ps.setString(index++, kind);
        }
        return index;
    }

    /** Resumes the held schedules this engine declares, then holds those no engine declares. */
    void check() {
        resumeOwn();
        holdOrphans();
    }

    private record Row(String name, String kind, Instant nextSlot, long version) {}

    /**
     * The next slot of a resumed row: the one it was held with, so that the slots missed while it was
     * held follow its missed-slot policy; or, if its definition changed meanwhile and left none, the
     * first slot from now (a fixed delay keeps none: it waits for its latest task).
     */
    private Instant resumeAt(ResultSet rs) throws SQLException {
        Instant kept = dialect.getInstant(rs, "next_slot");
        if (kept != null) {
            return kept;
        }
        io.dbtasks.schedule.Trigger trigger = rows.trigger(rs);
        Instant now = dialect.getInstant(rs, "db_now").truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        return trigger.type() == io.dbtasks.schedule.Trigger.Type.FIXED_DELAY
                ? null
                : SlotPlanner.firstAtOrAfter(trigger, now, now);
    }

    private void holdOrphans() {
        jdbc.withConnection("Holding schedules whose code no engine has", c -> {
            List<Row> orphans = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(orphansSql)) {
                int i = 1;
                if (clock == null) {
                    ps.setLong(i++, -GRACE.toMillis());
                } else {
                    dialect.setInstant(ps, i++, clock.instant().minus(GRACE));
                }
                bindDeclared(ps, i);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        orphans.add(new Row(
                                rs.getString("name"),
                                rs.getString("task_kind"),
                                dialect.getInstant(rs, "next_slot"),
                                rs.getLong("version")));
                    }
                }
            }
            for (Row r : orphans) {
                try (PreparedStatement ps = c.prepareStatement(holdSql)) {
                    ps.setString(1, r.name);
                    ps.setLong(2, r.version);
                    if (ps.executeUpdate() == 1) {
                        log.warn(
                                "Schedule '{}' (task kind '{}') is declared in code that no running engine declares:"
                                        + " its slot {} was not fired within {} s. It is paused, and resumes when an"
                                        + " engine that declares it starts. If its code (a @Recurring method, a"
                                        + " DbTasks.Builder.schedule) was removed for good, delete it with"
                                        + " dbTasks.schedules().delete(\"{}\")",
                                r.name,
                                r.kind,
                                r.nextSlot,
                                GRACE.toSeconds(),
                                r.name);
                    }
                }
            }
            return null;
        });
    }

    private void resumeOwn() {
        if (heldSql == null) {
            return;
        }
        jdbc.withConnection("Resuming held schedules declared here", c -> {
            List<Row> held = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(heldSql)) {
                int i = 1;
                if (clock != null) {
                    dialect.setInstant(ps, i++, clock.instant());
                }
                bindDeclared(ps, i);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        held.add(new Row(rs.getString("name"), null, resumeAt(rs), rs.getLong("version")));
                    }
                }
            }
            for (Row r : held) {
                try (PreparedStatement ps = c.prepareStatement(resumeSql)) {
                    dialect.setInstant(ps, 1, r.nextSlot);
                    ps.setString(2, r.name);
                    ps.setLong(3, r.version);
                    if (ps.executeUpdate() == 1) {
                        log.info(
                                "Schedule '{}' resumed: an engine that declares it in code or handles its kind runs again",
                                r.name);
                    }
                }
            }
            return null;
        });
    }
}
