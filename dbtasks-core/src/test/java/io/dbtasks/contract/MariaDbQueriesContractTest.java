package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbQueriesContractTest extends QueriesContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
