package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresQueriesContractTest extends QueriesContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
