package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbForeignTasksContractTest extends ForeignTasksContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
