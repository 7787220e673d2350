package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbTaskContractTest extends TaskContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
