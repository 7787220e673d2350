package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresTransactionalHandlerContractTest extends TransactionalHandlerContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
