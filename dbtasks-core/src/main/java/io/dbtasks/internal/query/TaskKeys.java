package io.dbtasks.internal.query;

import io.dbtasks.internal.dialect.Dialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The table of idempotency keys, {@code dbtasks_task_key}: one row per key of a stored task, live or
 * finished. It keeps a key unique across the live tasks and every day of history, which a unique
 * index of a task table partitioned by history day cannot (such an index must contain the partition
 * key). A keyed enqueue inserts the key here first, in its own transaction, and inserts the task only
 * if the key was new; whoever deletes a task deletes its key in the same transaction ({@link
 * #deleteOf}), so that the key can be used again.
 *
 * <p>Two enqueues of one key at once: the second one's insert waits on the first one's uncommitted
 * key row, then finds it (and inserts no task) if the first commits, or inserts it if the first
 * rolls back.
 *
 * <p>Immutable; thread-safe.
 */
public final class TaskKeys {
    /** The most keys one multi-row INSERT takes. */
    private static final int MAX_ROWS = 500;

    private final Dialect dialect;

    /** @param dialect the database's dialect */
    public TaskKeys(Dialect dialect) {
        this.dialect = dialect;
    }

    /**
     * Inserts {@code keys} on {@code c}, in the caller's transaction.
     *
     * @param c a connection in a transaction
     * @param keys the keys, not {@code null}; a key may appear more than once
     * @return the keys that were new, each once; the others belong to stored tasks
     * @throws SQLException if the database fails otherwise
     */
    public Set<String> claim(Connection c, List<String> keys) throws SQLException {
        Set<String> fresh = new LinkedHashSet<>();
        List<String> distinct = new ArrayList<>(new LinkedHashSet<>(keys));
        for (int from = 0; from < distinct.size(); from += MAX_ROWS) {
            List<String> part = distinct.subList(from, Math.min(distinct.size(), from + MAX_ROWS));
            if (!dialect.onConflictDoNothing().isEmpty()) {
                fresh.addAll(insertReturning(c, part));
            } else {
                fresh.addAll(insertOrOneByOne(c, part));
            }
        }
        return fresh;
    }

    /** PostgreSQL: a duplicate inserts nothing, and RETURNING names the keys inserted. */
    private Set<String> insertReturning(Connection c, List<String> keys) throws SQLException {
        Set<String> fresh = new LinkedHashSet<>();
        try (PreparedStatement ps = c.prepareStatement(
                insert(keys.size()) + dialect.onConflictDoNothing() + " RETURNING idempotency_key")) {
            for (int i = 0; i < keys.size(); i++) {
                ps.setString(i + 1, keys.get(i));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    fresh.add(rs.getString(1));
                }
            }
        }
        return fresh;
    }

    /**
     * Where a duplicate fails only its statement: all keys in one statement, and if one of them
     * exists, back to the savepoint and one statement per key.
     */
    private Set<String> insertOrOneByOne(Connection c, List<String> keys) throws SQLException {
        if (keys.size() > 1) {
            Savepoint before = c.setSavepoint();
            try {
                run(c, keys);
                c.releaseSavepoint(before);
                return new LinkedHashSet<>(keys);
            } catch (SQLException e) {
                if (!dialect.isUniqueViolation(e)) {
                    throw e;
                }
                c.rollback(before);
            }
        }
        Set<String> fresh = new LinkedHashSet<>();
        for (String key : keys) {
            try {
                run(c, List.of(key));
                fresh.add(key);
            } catch (SQLException e) {
                if (!dialect.isUniqueViolation(e)) {
                    throw e;
                }
            }
        }
        return fresh;
    }

    private void run(Connection c, List<String> keys) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(insert(keys.size()))) {
            for (int i = 0; i < keys.size(); i++) {
                ps.setString(i + 1, keys.get(i));
            }
            ps.executeUpdate();
        }
    }

    private static String insert(int rows) {
        return "INSERT INTO dbtasks_task_key (idempotency_key) VALUES "
                + String.join(", ", Collections.nCopies(rows, "(?)"));
    }

    /**
     * Deletes the keys of the tasks {@code ids}, before the tasks themselves are deleted in the same
     * transaction.
     *
     * @param c a connection in the deleting transaction
     * @param ids the tasks' ids, at most a few thousand
     * @return the keys deleted
     * @throws SQLException if the database fails
     */
    public static int deleteOf(Connection c, List<Long> ids) throws SQLException {
        if (ids.isEmpty()) {
            return 0;
        }
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM dbtasks_task_key WHERE idempotency_key IN"
                + " (SELECT idempotency_key FROM dbtasks_task WHERE id IN ("
                + String.join(", ", Collections.nCopies(ids.size(), "?"))
                + ") AND idempotency_key IS NOT NULL)")) {
            for (int i = 0; i < ids.size(); i++) {
                ps.setLong(i + 1, ids.get(i));
            }
            return ps.executeUpdate();
        }
    }
}
