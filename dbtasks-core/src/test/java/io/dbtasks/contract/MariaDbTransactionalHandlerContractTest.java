package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class MariaDbTransactionalHandlerContractTest extends TransactionalHandlerContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.MARIADB;
    }
}
