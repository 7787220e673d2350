package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbOperationsContractTest extends OperationsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
