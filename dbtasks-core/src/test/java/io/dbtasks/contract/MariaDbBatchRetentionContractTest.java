package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbBatchRetentionContractTest extends BatchRetentionContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
