package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.mariadb.jdbc.MariaDbDataSource;

class MariaDbOutageContractTest extends OutageContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }

    @Override
    protected DataSource unpooled(String url) {
        try {
            return new MariaDbDataSource(url + (url.contains("?") ? "&" : "?") + "connectTimeout=2000");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
