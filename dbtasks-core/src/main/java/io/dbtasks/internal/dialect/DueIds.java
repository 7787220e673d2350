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
     * @param select a query for {@code id} whose parameters are the queue, then the limit
     * @param queue the queue claimed from
     * @param limit the most ids to read
     * @return the ids in the query's order; empty if none is due
     * @throws SQLException if the query fails
     */
    static List<Long> read(Connection c, String select, String queue, int limit) throws SQLException {
        List<Long> ids = new ArrayList<>(limit);
        try (PreparedStatement ps = c.prepareStatement(select)) {
            ps.setString(1, queue);
            ps.setInt(2, limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
        }
        return ids;
    }
}
