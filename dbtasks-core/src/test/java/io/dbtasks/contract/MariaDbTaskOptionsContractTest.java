package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbTaskOptionsContractTest extends TaskOptionsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
