package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbTaskSearchContractTest extends TaskSearchContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
