package io.dbtasks.chaos;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Checks the lock workload ({@link LockWorker}) after its processes exited.
 *
 * <ul>
 *   <li>{@code counter}, {@code history}, {@code acceptedLogged}: the counter row, the accepted
 *       writes in the history and the accepted writes the processes logged must all be equal;
 *   <li>{@code orderBreaks}: history rows (in commit order) whose token is not greater than the one
 *       before: must be 0;
 *   <li>{@code takeovers}: {@code withLock} runs whose lease was taken over, i.e. a larger token was
 *       granted before their work ended; {@code unreported}: those of them that did not throw
 *       {@link io.dbtasks.lock.LeaseLostException}, and runs whose fenced write was refused yet did
 *       not report: must be 0.
 * </ul>
 */
public final class LockChecker {
    private LockChecker() {}

    /**
     * @param ds the chaos database
     * @return the figures
     * @throws SQLException if a query fails
     */
    public static Map<String, Long> check(DataSource ds) throws SQLException {
        Map<String, Long> m = new LinkedHashMap<>();
        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            m.put("counter", Checker.one(s, "SELECT n FROM chaos_lock_counter WHERE id = 1"));
            m.put("history", Checker.one(s, "SELECT COUNT(*) FROM chaos_lock_history"));
            m.put("acceptedLogged", Checker.one(s, "SELECT COUNT(*) FROM chaos_lock_log WHERE accepted = 1"));
            long breaks = 0;
            long previous = 0;
            try (ResultSet rs = s.executeQuery("SELECT token FROM chaos_lock_history ORDER BY seq")) {
                while (rs.next()) {
                    long token = rs.getLong(1);
                    if (token <= previous) {
                        breaks++;
                    }
                    previous = token;
                }
            }
            m.put("orderBreaks", breaks);
            List<long[]> runs = new ArrayList<>(); // token, granted, workEnd, accepted, reported
            try (ResultSet rs = s.executeQuery(
                    "SELECT token, granted_us, work_end_us, accepted, reported FROM chaos_lock_log ORDER BY token")) {
                while (rs.next()) {
                    runs.add(new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)});
                }
            }
            long takeovers = 0;
            long unreported = 0;
            long reported = 0;
            // minimum grant time among larger tokens, from the largest down
            long[] minLaterGrant = new long[runs.size()];
            long min = Long.MAX_VALUE;
            for (int i = runs.size() - 1; i >= 0; i--) {
                minLaterGrant[i] = min;
                min = Math.min(min, runs.get(i)[1]);
            }
            for (int i = 0; i < runs.size(); i++) {
                long[] r = runs.get(i);
                boolean takenOver = minLaterGrant[i] < r[2];
                boolean refused = r[3] == 0;
                if (r[4] == 1) {
                    reported++;
                }
                if (takenOver) {
                    takeovers++;
                }
                if ((takenOver || refused) && r[4] == 0) {
                    unreported++;
                }
            }
            m.put("runs", (long) runs.size());
            m.put("takeovers", takeovers);
            m.put("reported", reported);
            m.put("unreported", unreported);
        }
        return m;
    }
}
