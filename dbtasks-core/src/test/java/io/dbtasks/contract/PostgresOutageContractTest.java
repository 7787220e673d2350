package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

class PostgresOutageContractTest extends OutageContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }

    @Override
    protected DataSource unpooled(String url) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(url);
        ds.setConnectTimeout(2);
        return ds;
    }
}
