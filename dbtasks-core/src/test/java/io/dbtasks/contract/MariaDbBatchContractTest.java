package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbBatchContractTest extends BatchContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
