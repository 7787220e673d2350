package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresTaskContractTest extends TaskContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
