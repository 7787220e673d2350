package io.dbtasks.internal.dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** The first step of a two-step claim (H2, MariaDB): read the ids of due tasks, in claim order. */
final class DueIds {
    private DueIds() {}

    /**
     * @param dialect binds the due condition
     * @param select a query for {@code id} whose parameters are the due condition's, then the limit
     * @param queue the queue claimed from
     * @param claimable what the claiming engine can run
     * @param limit the most ids to read
     * @return the ids in the query's order; empty if none is due
     * @throws SQLException if the query fails
     */
    static List<Long> read(Connection c, Dialect dialect, String select, String queue, Claimable claimable, int limit)
            throws SQLException {
        List<Long> ids = new ArrayList<>(limit);
        try (PreparedStatement ps = c.prepareStatement(select)) {
            int next = dialect.bindDue(ps, 1, queue, claimable);
            ps.setInt(next, limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
        }
        return ids;
    }
}
