package io.dbtasks.testing;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Prints, at the end of a test run, how many tests ran against each database, so the test command
 * says which databases it covered. A test belongs to a database when its class or display name
 * names it (H2, Postgres/PostgreSQL, MariaDb).
 */
public final class DatabaseSummaryListener implements TestExecutionListener {
    private final Map<TestDatabase, int[]> counts = new EnumMap<>(TestDatabase.class); // ran, failed, skipped

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
        if (id.isTest()) {
            count(id, 2);
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (!id.isTest()) {
            return;
        }
        if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
            count(id, 2);
        } else {
            count(id, 0);
            if (result.getStatus() == TestExecutionResult.Status.FAILED) {
                count(id, 1);
            }
        }
    }

    @Override
    public void testPlanExecutionFinished(TestPlan plan) {
        if (counts.isEmpty()) {
            return;
        }
        StringBuilder b = new StringBuilder("dbtasks tests by database:");
        for (TestDatabase db : TestDatabase.values()) {
            int[] c = counts.getOrDefault(db, new int[3]);
            b.append(String.format(
                    " %s ran %d (failed %d, skipped %d)%s;",
                    db, c[0], c[1], c[2], db.required() ? "" : " [not required]"));
        }
        System.out.println(b);
    }

    private synchronized void count(TestIdentifier id, int slot) {
        String s = (id.getUniqueId() + " " + id.getDisplayName()).toLowerCase(Locale.ROOT);
        TestDatabase db = s.contains("mariadb")
                ? TestDatabase.MARIADB
                : s.contains("postgres") ? TestDatabase.POSTGRESQL : s.contains("h2") ? TestDatabase.H2 : null;
        if (db != null) {
            counts.computeIfAbsent(db, d -> new int[3])[slot]++;
        }
    }
}
