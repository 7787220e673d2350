package io.dbtasks.contract;

import io.dbtasks.testing.TestDatabase;

class PostgresOperationsContractTest extends OperationsContract {
    @Override
    protected TestDatabase database() {
        return TestDatabase.POSTGRESQL;
    }
}
