package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresBatchContractTest extends BatchContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
