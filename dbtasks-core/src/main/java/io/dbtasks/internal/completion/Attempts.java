package io.dbtasks.internal.completion;

import io.dbtasks.AttemptOutcome;
import io.dbtasks.internal.dialect.Dialect;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Collections;
import java.util.List;

/** Writes the execution history: one row per attempt, in the transaction that settles it. */
public final class Attempts {
    static final int MAX_MESSAGE = 4000;
    static final int MAX_STACK = 16000;

    /** One attempt row; error fields are {@code null} on success. */
    public record Row(
            long taskId,
            int attempt,
            String queue,
            String worker,
            long fencingToken,
            Instant startedAt,
            long durationMs,
            AttemptOutcome outcome,
            String errorClass,
            String errorMessage,
            String stackTrace) {

        static Row of(io.dbtasks.Task t, long durationMs, AttemptOutcome outcome, Throwable error) {
            return of(t, durationMs, outcome, error, error == null ? null : Attempts.stackTrace(error));
        }

        /** @param stackTrace {@code error}'s stack trace, rendered by {@link Attempts#stackTrace} */
        static Row of(io.dbtasks.Task t, long durationMs, AttemptOutcome outcome, Throwable error, String stackTrace) {
            return new Row(
                    t.id(),
                    t.attempt(),
                    t.queue(),
                    t.leaseOwner(),
                    t.fencingToken(),
                    t.startedAt(),
                    durationMs,
                    outcome,
                    error == null ? null : error.getClass().getName(),
                    error == null ? null : truncate(String.valueOf(error.getMessage()), MAX_MESSAGE),
                    stackTrace);
        }
    }

    private final String insertPrefix;
    private final String valuesRow;
    private final Dialect dialect;

    public Attempts(Dialect dialect) {
        this.dialect = dialect;
        this.insertPrefix = "INSERT INTO dbtasks_attempt (task_id, attempt, queue, worker, lease_token, started_at,"
                + " finished_at, duration_ms, outcome, error_class, error_message, stack_trace, history_day) VALUES ";
        // An attempt row belongs to the day it ended (a task's earlier attempts may end on earlier days).
        this.valuesRow = "(?, ?, ?, ?, ?, COALESCE(?, " + dialect.now() + "), " + dialect.statementTime()
                + ", ?, ?, ?, ?, ?, " + dialect.historyDay(dialect.statementTime()) + ")";
    }

    public void insert(Connection c, Row r) throws SQLException {
        insertAll(c, List.of(r));
    }

    /** Inserts {@code rows} with one multi-row INSERT. */
    void insertAll(Connection c, List<Row> rows) throws SQLException {
        if (rows.isEmpty()) {
            return;
        }
        String sql = insertPrefix + String.join(", ", Collections.nCopies(rows.size(), valuesRow));
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int i = 1;
            for (Row r : rows) {
                ps.setLong(i++, r.taskId());
                ps.setInt(i++, r.attempt());
                ps.setString(i++, r.queue());
                ps.setString(i++, r.worker() == null ? "unknown" : r.worker());
                ps.setLong(i++, r.fencingToken());
                dialect.setInstant(ps, i++, r.startedAt());
                ps.setLong(i++, r.durationMs());
                ps.setString(i++, r.outcome().name());
                ps.setString(i++, r.errorClass());
                ps.setString(i++, r.errorMessage());
                ps.setString(i++, r.stackTrace());
            }
            int n = ps.executeUpdate();
            if (n != rows.size()) {
                throw new IllegalStateException("inserted " + n + " attempt rows of " + rows.size());
            }
        }
    }

    /** A readable one-line reason: {@code ClassName: message}. */
    public static String reason(Throwable t) {
        String m = t.getMessage();
        return truncate(t.getClass().getName() + (m == null ? "" : ": " + m), MAX_MESSAGE);
    }

    static String stackTrace(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        return truncate(w.toString(), MAX_STACK);
    }

    /**
     * Error text as every database can store it: NUL characters, which PostgreSQL refuses in text
     * columns (so the outcome could not be recorded at all), become U+FFFD, and text longer than
     * {@code max} is cut, never inside a surrogate pair, and marked.
     */
    static String truncate(String s, int max) {
        if (s == null) {
            return null;
        }
        String clean = s.indexOf('\u0000') < 0 ? s : s.replace('\u0000', '\uFFFD');
        if (clean.length() <= max) {
            return clean;
        }
        int cut = max - 15;
        if (Character.isHighSurrogate(clean.charAt(cut - 1))) {
            cut--;
        }
        return clean.substring(0, cut) + "...[truncated]";
    }
}
