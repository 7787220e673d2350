package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresTaskSearchContractTest extends TaskSearchContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
