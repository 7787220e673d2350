package io.dbtasks.internal.limit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.DbTasksException;
import io.dbtasks.internal.dialect.Dialects;
import io.dbtasks.internal.support.Jdbc;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/**
 * Until one read of the limit rows has succeeded, {@link JdbcLimits#forQueue} has no answer: a claim
 * asking then fails (and the claim loop retries) instead of claiming as if the queue had no limits.
 */
class JdbcLimitsFirstReadTest {
    @Test
    void noAnswerBeforeTheFirstSuccessfulReadThenTheRowsApply() throws SQLException {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:limits_first_read;DB_CLOSE_DELAY=-1");
        JdbcLimits limits = new JdbcLimits(new Jdbc(ds), Dialects.forProduct("H2", "2.2"));

        // The table is missing: the read fails, and so does every ask until a read succeeds.
        assertThatThrownBy(() -> limits.forQueue("q")).isInstanceOf(DbTasksException.class);
        assertThatThrownBy(() -> limits.forQueue("q")).isInstanceOf(DbTasksException.class);

        try (Connection c = ds.getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE dbtasks_limit (queue VARCHAR(200), key_pattern VARCHAR(255),"
                    + " max_running INT, fifo BOOLEAN, updated_at TIMESTAMP, rate_starts INT, rate_period_ms BIGINT)");
            s.execute("CREATE TABLE dbtasks_fair_queue (queue VARCHAR(200), updated_at TIMESTAMP)");
            s.execute("CREATE TABLE dbtasks_queue_rate (queue VARCHAR(200), rate_starts INT, rate_period_ms BIGINT,"
                    + " updated_at TIMESTAMP)");
            s.execute("INSERT INTO dbtasks_limit VALUES ('q', 'k', 2, FALSE, CURRENT_TIMESTAMP, NULL, NULL)");
        }
        assertThat(limits.forQueue("q").forKey("k"))
                .hasValueSatisfying(l -> assertThat(l.maxRunning()).isEqualTo(2));
    }
}
