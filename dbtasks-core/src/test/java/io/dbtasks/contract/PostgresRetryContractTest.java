package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresRetryContractTest extends RetryContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
