package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresBatchRetentionContractTest extends BatchRetentionContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
