package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresRunOnceContractTest extends RunOnceContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
