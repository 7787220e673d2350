package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresEnqueueContractTest extends EnqueueContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
